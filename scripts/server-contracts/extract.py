#!/usr/bin/env python3
"""Read a server's request/response models and HTTP routes from its Python source and write them
as JSON Schema (draft-07 `definitions`) plus a route table, stamped with repository and commit.

Only the standard library: the source is parsed with `ast`, never imported. Understood:
pydantic `BaseModel` subclasses (fields, `Field(...)` defaults and bounds, `model_config` /
`class Config` extra policy), msgspec `Struct` subclasses (`forbid_unknown_fields`), dataclasses
(fields, or `__init__` where the class writes its own), plain classes the server builds with
`Cls(**body)` (their `__init__` parameters; named with --init-class), module-level type aliases and
string constants, and FastAPI routes (`@app.post(...)`, `@router.api_route(...)`, router
prefixes), with the body model read from the handler's annotations or from
`Model.model_validate(...)` / `Model(**...)` in it or a helper it calls.

Each definition carries `x-source` (file:line) and `x-extra` (what the server does with a field it
does not know: `ignore`, `forbid` or `allow`); `additionalProperties: false` is written only where
the server itself refuses unknown fields. Usage: see run.sh.
"""
import argparse
import ast
import json
import sys

MODEL_BASES = {'BaseModel', 'Struct', 'SQLModel'}
SCALARS = {
    'str': {'type': 'string'}, 'int': {'type': 'integer'}, 'float': {'type': 'number'},
    'bool': {'type': 'boolean'}, 'bytes': {'type': 'string'}, 'Base64Bytes': {'type': 'string'},
    'datetime': {'type': 'string'}, 'date': {'type': 'string'}, 'UUID': {'type': 'string'},
    'Any': {}, 'object': {}, 'None': {'type': 'null'}, 'NoneType': {'type': 'null'},
    'dict': {'type': 'object'}, 'Dict': {'type': 'object'}, 'list': {'type': 'array'}, 'List': {'type': 'array'},
    'StrictStr': {'type': 'string'}, 'StrictInt': {'type': 'integer'}, 'StrictBool': {'type': 'boolean'},
}
ARRAYS = {'list', 'List', 'Sequence', 'Set', 'set', 'FrozenSet', 'frozenset', 'Iterable', 'conlist'}
MAPS = {'dict', 'Dict', 'Mapping', 'MutableMapping'}
ROUTE_VERBS = {'get', 'post', 'put', 'delete', 'patch', 'api_route'}
BOUNDS = {'ge': 'minimum', 'gt': 'exclusiveMinimum', 'le': 'maximum', 'lt': 'exclusiveMaximum'}


def name_of(node):
    """The last name of `a.b.C` or `C`; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def literal(node, consts):
    """A constant's value (module-level string/number constants resolved), or raises ValueError."""
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    return ast.literal_eval(node)


class Module:
    """One parsed file: its classes, functions, constants, aliases and routers."""

    def __init__(self, path, text):
        self.path = path
        self.tree = ast.parse(text, filename=path)
        self.classes, self.functions, self.consts, self.aliases, self.prefixes = {}, {}, {}, {}, {}
        for node in self.tree.body:
            self.take(node)

    def take(self, node):
        if isinstance(node, ast.ClassDef):
            self.classes[node.name] = node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.assign(node.targets[0].id, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            if name_of(node.annotation) == 'TypeAlias':
                self.aliases[node.target.id] = node.value
            else:
                self.assign(node.target.id, node.value)
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` / version switches: take both arms
            for inner in node.body + node.orelse:
                self.take(inner)

    def assign(self, name, value):
        if isinstance(value, ast.Constant) and isinstance(value.value, (str, int, float)):
            self.consts[name] = value.value
        elif isinstance(value, ast.Call) and name_of(value.func) in ('APIRouter', 'FastAPI'):
            for kw in value.keywords:
                if kw.arg == 'prefix':
                    self.prefixes[name] = literal(kw.value, self.consts)
            self.prefixes.setdefault(name, '')
        elif isinstance(value, (ast.Subscript, ast.BinOp)) or (isinstance(value, ast.Name) and value.id[:1].isupper()):
            self.aliases[name] = value


class Extractor:
    def __init__(self, modules, init_classes):
        self.modules = modules
        self.init_classes = set(init_classes)
        self.defs, self.unresolved, self.where, self.cur = {}, set(), {}, []
        for m in modules:
            for cname in m.classes:
                self.where.setdefault(cname, m)
        self.consts = {k: v for m in reversed(modules) for k, v in m.consts.items()}

    # -- classes ---------------------------------------------------------------------------------
    def find(self, cname):
        """The module that defines `cname` as seen from the class being read: its own module first."""
        cur = self.cur[-1] if self.cur else None
        return cur if cur is not None and cname in cur.classes else self.where.get(cname)

    def key(self, m, cname):
        """The definition name: the class name, prefixed by its file where an earlier file has the same name."""
        return cname if self.where.get(cname) is m else f"{m.path.rsplit('/', 1)[-1][:-3]}.{cname}"

    def kind(self, cname, seen=()):
        """'pydantic' | 'msgspec' | 'dataclass' | 'init' | None for a class name."""
        m = self.find(cname)
        if m is None or cname in seen:
            return 'pydantic' if cname == 'BaseModel' else 'msgspec' if cname == 'Struct' else None
        node = m.classes[cname]
        for d in node.decorator_list:
            if name_of(d.func if isinstance(d, ast.Call) else d) == 'dataclass':
                return 'dataclass'
        for b in node.bases:
            bn = name_of(b.value if isinstance(b, ast.Subscript) else b)
            if bn in MODEL_BASES:
                return 'msgspec' if bn == 'Struct' else 'pydantic'
            k = self.kind(bn, seen + (cname,)) if bn else None
            if k:
                return k
        return 'init' if cname in self.init_classes else None

    def extra(self, cname, kind, seen=()):
        """What the server does with unknown fields of this class."""
        if kind == 'init' or (cname in self.init_classes and kind != 'pydantic'):
            return 'forbid'  # Cls(**body): an unexpected keyword is a TypeError (pydantic models drop it instead)
        m = self.find(cname)
        if m is None or cname in seen:
            return 'ignore'
        node = m.classes[cname]
        for kw in node.keywords:
            if kw.arg == 'extra':
                return literal(kw.value, self.consts)
            if kw.arg == 'forbid_unknown_fields':
                return 'forbid' if literal(kw.value, self.consts) else 'ignore'
        for stmt in node.body:
            found = self.config_extra(stmt)
            if found:
                return found
        for b in node.bases:
            bn = name_of(b)
            if self.find(bn):
                return self.extra(bn, kind, seen + (cname,))
        return 'ignore'

    def config_extra(self, stmt):
        if isinstance(stmt, ast.Assign) and any(name_of(t) == 'model_config' for t in stmt.targets) and isinstance(stmt.value, ast.Call):
            for kw in stmt.value.keywords:
                if kw.arg == 'extra':
                    return str(literal(kw.value, self.consts)).split('.')[-1]
        if isinstance(stmt, ast.ClassDef) and stmt.name == 'Config':
            for s in stmt.body:
                if isinstance(s, ast.Assign) and any(name_of(t) == 'extra' for t in s.targets):
                    v = s.value
                    return name_of(v).lower() if isinstance(v, ast.Attribute) else literal(v, self.consts)
        return None

    def fields(self, cname, kind, seen=()):
        """[(name, annotation, default node or None, line)] of a class, bases first."""
        m = self.find(cname)
        node = m.classes[cname]
        out = []
        for b in node.bases:
            bn = name_of(b)
            if self.find(bn) and bn not in seen and self.kind(bn):
                out.extend(self.fields(bn, kind, seen + (cname,)))
        init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == '__init__'), None)
        writes_init = any(isinstance(d, ast.Call) and any(k.arg == 'init' and isinstance(k.value, ast.Constant) and k.value.value is False for k in d.keywords) for d in node.decorator_list)
        if init is not None and (kind == 'init' or writes_init):
            return out + self.init_fields(init)
        for s in node.body:
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                n = s.target.id
                if n.startswith('_') or n == 'model_config' or name_of(s.annotation) == 'ClassVar' or (isinstance(s.annotation, ast.Subscript) and name_of(s.annotation.value) == 'ClassVar'):
                    continue
                out = [f for f in out if f[0] != n] + [(n, s.annotation, s.value, s.lineno)]
        return out

    @staticmethod
    def init_fields(init):
        args = init.args.args[1:] + init.args.kwonlyargs
        defaults = [None] * (len(init.args.args) - 1 - len(init.args.defaults)) + list(init.args.defaults) + list(init.args.kw_defaults)
        return [(a.arg, a.annotation, d, a.lineno) for a, d in zip(args, defaults) if not a.arg.startswith('_')]

    def define(self, cname):
        """Add a class (and what it refers to) to the definitions; returns its $ref."""
        m = self.find(cname)
        key = self.key(m, cname)
        if key not in self.defs:
            self.defs[key] = None  # placeholder against recursion
            self.cur.append(m)
            try:
                self.defs[key] = self.definition(m, cname)
            finally:
                self.cur.pop()
        return {'$ref': f'#/definitions/{key}'}

    def definition(self, m, cname):
        """One class as a JSON Schema object."""
        kind = self.kind(cname)
        extra = self.extra(cname, kind)
        props, required = {}, []
        for n, ann, default, line in self.fields(cname, kind):
            schema, optional = self.field(ann, default)
            props[n] = schema
            if not optional:
                required.append(n)
        d = {'type': 'object', 'properties': props, 'x-kind': kind, 'x-extra': extra, 'x-source': f'{m.path}:{m.classes[cname].lineno}'}
        if required:
            d['required'] = required
        if extra == 'forbid':
            d['additionalProperties'] = False
        validators = [f.name for f in m.classes[cname].body if isinstance(f, ast.FunctionDef) and any(name_of(x.func if isinstance(x, ast.Call) else x) in ('model_validator', 'field_validator', 'validator', 'root_validator') for x in f.decorator_list)]
        if validators or any(isinstance(f, ast.FunctionDef) and f.name == '__post_init__' for f in m.classes[cname].body):
            d['x-validators'] = validators or ['__post_init__']
        return d

    def field(self, ann, default):
        """(schema, optional) of one field from its annotation and default."""
        schema = self.schema(ann) if ann is not None else {}
        if default is None:
            return schema, False
        if isinstance(default, ast.Call) and name_of(default.func) in ('Field', 'field'):
            has_default = bool(default.args) and not (isinstance(default.args[0], ast.Constant) and default.args[0].value is Ellipsis)
            for kw in default.keywords:
                if kw.arg in ('default', 'default_factory'):
                    has_default = not (isinstance(kw.value, ast.Constant) and kw.value.value is Ellipsis)
                self.constrain(schema, kw)
            return schema, has_default
        return schema, True

    def constrain(self, schema, kw):
        try:
            value = literal(kw.value, self.consts)
        except (ValueError, SyntaxError, TypeError):
            return
        target = schema
        if 'anyOf' in schema:  # Optional[X]: the bound is X's
            target = next((s for s in schema['anyOf'] if s.get('type') != 'null'), schema)
        if kw.arg in BOUNDS:
            target[BOUNDS[kw.arg]] = value
        elif kw.arg == 'pattern':
            target['pattern'] = value
        elif kw.arg in ('min_length', 'max_length'):
            arr = target.get('type') == 'array'
            target[('min' if kw.arg.startswith('min') else 'max') + ('Items' if arr else 'Length')] = value

    # -- annotations -----------------------------------------------------------------------------
    def schema(self, node):
        if isinstance(node, ast.Constant):
            if node.value is None:
                return {'type': 'null'}
            if isinstance(node.value, str):  # a forward reference
                return self.schema(ast.parse(node.value, mode='eval').body)
            return {'const': node.value}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.union([node.left, node.right])
        if isinstance(node, ast.Subscript):
            return self.subscript(name_of(node.value), node.slice)
        n = name_of(node)
        if n in SCALARS:
            return dict(SCALARS[n])
        if self.find(n) and self.kind(n):
            return self.define(n)
        cur = self.cur[-1] if self.cur else None
        alias = cur.aliases[n] if cur is not None and n in cur.aliases else next((m.aliases[n] for m in self.modules if n in m.aliases), None)
        if alias is not None:
            return self.schema(alias)
        if self.find(n):  # an Enum or another class the server reads as a value
            return self.enum(n)
        self.unresolved.add(n or ast.dump(node)[:60])
        return {'x-unresolved': n}

    def enum(self, cname):
        node = self.find(cname).classes[cname]
        values = [s.value.value for s in node.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant)]
        return {'enum': values} if values else {'x-unresolved': cname}

    def union(self, nodes):
        flat = []
        for n in nodes:
            s = self.schema(n)
            flat.extend(s['anyOf'] if list(s) == ['anyOf'] else [s])
        return {'anyOf': flat}

    def subscript(self, head, sl):
        items = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        if head == 'Optional':
            return self.union([items[0], ast.Constant(None)])
        if head == 'Union':
            return self.union(items)
        if head == 'Literal':
            return {'enum': [literal(i, self.consts) for i in items]}
        if head in ('Annotated', 'Required', 'NotRequired', 'ReadOnly'):
            s = self.schema(items[0])
            for extra in items[1:]:
                if isinstance(extra, ast.Call) and name_of(extra.func) in ('Field', 'Meta'):
                    for kw in extra.keywords:
                        self.constrain(s, kw)
            return s
        if head in ARRAYS:
            return {'type': 'array', 'items': self.schema(items[0])}
        if head in ('tuple', 'Tuple'):
            if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
                return {'type': 'array', 'items': self.schema(items[0])}
            return {'type': 'array', 'items': [self.schema(i) for i in items], 'minItems': len(items), 'maxItems': len(items)}
        if head in MAPS:
            return {'type': 'object', 'additionalProperties': self.schema(items[-1])}
        if head in ('Type', 'type', 'ClassVar', 'Callable'):
            return {}
        return self.schema(ast.Name(head)) if head else {}


def read(args, path):
    """A file of the source: from the git mirror at the commit, or from a plain folder."""
    if args.git:
        import subprocess
        return subprocess.run(['git', '--git-dir', args.git, 'show', f'{args.commit}:{path}'], check=True, capture_output=True, text=True).stdout
    with open(f'{args.tree}/{path}', encoding='utf-8') as f:
        return f.read()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--repo', required=True, help='owner/name, stamped into the output')
    p.add_argument('--commit', required=True, help='the full commit read (and stamped)')
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument('--git', help='a git directory (a mirror) to read the commit from')
    src.add_argument('--tree', help='a checked-out folder of that commit')
    p.add_argument('--file', action='append', default=[], help='a source file, in lookup order (routes are read from every one)')
    p.add_argument('--client-file', action='append', default=[], help='a client library file: the routes it calls')
    p.add_argument('--define', action='append', default=[], help='a class to define even if no route names it')
    p.add_argument('--init-class', action='append', default=[], help='a plain class the server builds as Cls(**body)')
    p.add_argument('--out', required=True)
    args = p.parse_args(argv)
    from routes import client_routes, routes
    modules = [Module(f, read(args, f)) for f in args.file]
    clients = [Module(f, read(args, f)) for f in args.client_file]
    ex = Extractor(modules, args.init_class)
    table = [r for m in modules for r in routes(m, ex)] + sorted((r for m in clients for r in client_routes(m, ex)), key=lambda r: (r['path'], r['methods']))
    for name in args.define:
        if not ex.find(name) or not ex.kind(name):
            sys.exit(f'--define {name}: no such model in {args.file}')
        ex.define(name)
    out = {
        '$schema': 'http://json-schema.org/draft-07/schema#',
        'x-generated-by': 'scripts/server-contracts/extract.py',
        'x-repository': args.repo,
        'x-commit': args.commit,
        'x-files': args.file + args.client_file,
        'x-unresolved': sorted(ex.unresolved),
        'routes': table,
        'definitions': dict(sorted(ex.defs.items())),
    }
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write('\n')
    print(f'{args.out}: {len(table)} routes, {len(ex.defs)} models, unresolved: {sorted(ex.unresolved) or "none"}')


if __name__ == '__main__':
    main(sys.argv[1:])
