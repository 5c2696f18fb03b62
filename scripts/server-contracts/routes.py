"""FastAPI routes of a parsed module: method, path, handler, body model, query parameters, response model."""
import ast

from extract import ROUTE_VERBS, literal, name_of

# Parameters FastAPI fills itself, never from the body.
FRAMEWORK = {'Request', 'Response', 'BackgroundTasks', 'WebSocket', 'AsyncSession', 'Session', 'UploadFile'}
PARAM_MARKERS = {'Depends', 'Security', 'Query', 'Path', 'Header', 'Cookie', 'Body'}
VALIDATE = {'model_validate', 'model_validate_json', 'parse_obj', 'parse_raw', 'validate_python', 'validate_json'}


def decorator_route(dec, module):
    """(methods, path, response_model) of a route decorator, or None."""
    if not isinstance(dec, ast.Call) or not isinstance(dec.func, ast.Attribute) or dec.func.attr not in ROUTE_VERBS:
        return None
    owner = name_of(dec.func.value)
    if owner not in module.prefixes and owner not in ('app', 'router'):
        return None
    args = {kw.arg: kw.value for kw in dec.keywords}
    path_node = dec.args[0] if dec.args else args.get('path')
    try:
        path = module.prefixes.get(owner, '') + literal(path_node, module.consts)
    except (ValueError, SyntaxError, TypeError):
        return None
    if dec.func.attr == 'api_route':
        methods = [m.upper() for m in literal(args['methods'], module.consts)] if 'methods' in args else ['GET']
    else:
        methods = [dec.func.attr.upper()]
    response = name_of(args['response_model']) if 'response_model' in args else None
    return methods, path, response


def parsed_models(fn, module, ex, depth=2, seen=None):
    """Models the handler (or a helper it calls, `depth` deep) builds from the raw body."""
    seen = seen if seen is not None else set()
    found = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in VALIDATE and ex.find(name_of(f.value)) and ex.kind(name_of(f.value)):
            found.append(name_of(f.value))
        elif ex.find(name_of(f)) and ex.kind(name_of(f)) and any(isinstance(k, ast.keyword) and k.arg is None for k in node.keywords):
            found.append(name_of(f))  # Model(**body)
        elif isinstance(f, ast.Name) and f.id in module.functions and f.id not in seen and depth > 0:
            seen.add(f.id)
            found.extend(parsed_models(module.functions[f.id], module, ex, depth - 1, seen))
    return list(dict.fromkeys(found))


def handler_params(fn, ex):
    """(body params [(name, model, optional)], query params [name])."""
    body, query = [], []
    args = fn.args.args + fn.args.kwonlyargs
    defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults) + list(fn.args.kw_defaults)
    for a, d in zip(args, defaults):
        ann = a.annotation
        if ann is None:
            continue
        inner, optional = ann, d is not None
        if isinstance(ann, ast.Subscript) and name_of(ann.value) == 'Optional':
            inner = ann.slice
        elif isinstance(ann, ast.BinOp):
            parts = [p for p in (ann.left, ann.right) if not (isinstance(p, ast.Constant) and p.value is None)]
            inner = parts[0] if len(parts) == 1 else ann
        extras = [d]
        if isinstance(inner, ast.Subscript) and name_of(inner.value) == 'Annotated':
            inner, extras = inner.slice.elts[0], [d, *inner.slice.elts[1:]]
        n = name_of(inner)
        # FastAPI's parameter markers, in the default or in Annotated[...]: Query(), Path(), Header().
        marker = next((name_of(e.func) for e in extras if isinstance(e, ast.Call) and name_of(e.func) in PARAM_MARKERS), None)
        if n in FRAMEWORK or marker in ('Depends', 'Security', 'Path', 'Header', 'Cookie'):
            continue
        if marker == 'Query' and not (ex.find(n) and ex.kind(n)):
            query.append(a.arg)
            continue
        if ex.find(n) and ex.kind(n):
            body.append((a.arg, n, optional))
        elif n in ('str', 'int', 'float', 'bool') and not (isinstance(d, ast.Call) and name_of(d.func) == 'Path'):
            query.append(a.arg)
        elif n and n[0].isupper() and not ex.find(n) and marker in (None, 'Body'):
            # A class from a file not read (not given, or not stored at this commit): the route
            # still takes a body, whose model is unknown here.
            body.append((a.arg, n, optional))
    return body, query


def ref(r):
    return r['$ref'].rsplit('/', 1)[-1]


def routes(module, ex):
    ex.cur.append(module)
    try:
        return module_routes(module, ex)
    finally:
        ex.cur.pop()


def module_routes(module, ex):
    out = []
    # Routes may be declared inside a function (vLLM's `attach_router(app)`): every def is read.
    for fn in (n for n in ast.walk(module.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for dec in fn.decorator_list:
            r = decorator_route(dec, module)
            if r is None:
                continue
            methods, path, response = r
            body, query = handler_params(fn, ex)
            row = {'methods': methods, 'path': path, 'handler': fn.name, 'source': f'{module.path}:{fn.lineno}'}
            if body and not ex.find(body[0][1]):
                ex.unresolved.add(body[0][1])
                row.update(body=body[0][1], bodyUnresolved=True, bodyOptional=body[0][2])
            elif body:
                row['body'] = ref(ex.define(body[0][1]))
                row['bodyOptional'] = body[0][2]
            else:
                parsed = parsed_models(fn, module, ex)
                if parsed:
                    row['body'] = [ref(ex.define(p)) for p in parsed][0]
                    row['bodyParsedFromRequest'] = True
            if query:
                row['query'] = [q for q in query if '{' + q not in path]
            if response and ex.find(response) and ex.kind(response):
                row['response'] = ref(ex.define(response))
            out.append(row)
    return sorted(out, key=lambda r: (r['path'], r['methods']))


CLIENT_CALLS = {'_post': 'POST', '_get': 'GET', '_put': 'PUT', '_delete': 'DELETE', '_patch': 'PATCH'}


def client_routes(module, ex):
    """Routes a client library calls (`self._post("/api/v1/x", body=..., cast_to=Y)`), with the model
    its method takes as `request` and whether it sends protobuf instead of JSON."""
    ex.cur.append(module)
    out = []
    try:
        for fn in (n for n in ast.walk(module.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            body, _ = handler_params(fn, ex)
            names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
            proto = any('protobuf' in str(module.consts.get(n, '')) for n in names)
            for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                verb = CLIENT_CALLS.get(call.func.attr) if isinstance(call.func, ast.Attribute) else None
                if not verb or not call.args or not isinstance(call.args[0], (ast.Constant, ast.JoinedStr)):
                    continue
                path = call.args[0].value if isinstance(call.args[0], ast.Constant) else ''.join(v.value if isinstance(v, ast.Constant) else '{}' for v in call.args[0].values)
                row = {'methods': [verb], 'path': path, 'handler': fn.name, 'source': f'{module.path}:{call.lineno}'}
                if body and ex.find(body[0][1]):
                    row['body'] = ref(ex.define(body[0][1]))
                if proto:
                    row['encoding'] = 'protobuf'
                cast = next((k.value for k in call.keywords if k.arg == 'cast_to'), None)
                if cast is not None and ex.find(name_of(cast)) and ex.kind(name_of(cast)):
                    row['response'] = ref(ex.define(name_of(cast)))
                out.append(row)
    finally:
        ex.cur.pop()
    return out
