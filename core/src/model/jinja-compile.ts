/**
 * A chat template's parsed form (from @huggingface/jinja) compiled to JavaScript closures over
 * plain values. @huggingface/jinja's interpreter wraps every value it touches in a runtime object
 * (a small render of Qwen3's template allocates thousands); the proxy renders at every call, so
 * that allocation and its garbage were most of a call's cost. The closures compute what the
 * interpreter computes — same operators, truthiness, member access, `tojson`, loop variables and
 * scopes, down to its quirks (`==` is JavaScript's loose equality on the values, booleans print
 * as `true`) — for the constructs chat templates use. A construct outside that set makes
 * {@link compileTemplate} return undefined (the interpreter renders that template), and a value
 * outside it at render time (an operation on `none`, a float in arithmetic, comparing two lists)
 * throws {@link Fallback}: that render is redone by the interpreter, which is always the reference
 * (its result or its error). Tests compare both on every golden case.
 */

/** Raised while rendering where the compiled form does not decide the interpreter's result. */
export class Fallback extends Error {}

/** Raised at compile time for a construct the compiler does not handle. */
class Unsupported extends Error {}

/** A Jinja `namespace(...)` object: attributes that `set ns.x = …` can change. */
class Namespace {
  constructor(readonly map: Map<string, unknown>) {}
}

type Fn = (...args: unknown[]) => unknown;
type Node = { type: string; [k: string]: unknown };
type Expr = (scope: Scope) => unknown;
type Stmt = (scope: Scope, out: string[]) => void;

/** Variables of one scope; lookups go up through parents (the interpreter's Environment). */
class Scope {
  readonly vars = new Map<string, unknown>();
  constructor(readonly parent?: Scope) {}
  lookup(name: string): unknown {
    for (let s: Scope | undefined = this; s; s = s.parent) {
      // One map lookup where the value is defined (nearly always); `has` only to tell an unset name from one set to undefined.
      const v = s.vars.get(name);
      if (v !== undefined || s.vars.has(name)) return v;
    }
    return undefined;
  }
}

const own = Object.prototype.hasOwnProperty;
/** The interpreter's ObjectValue builtins: reading them as attributes needs the interpreter. */
const OBJECT_BUILTINS = new Set(['get', 'items', 'keys', 'values', 'dictsort']);

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Namespace);
const isPrimitive = (v: unknown) => v === null || v === undefined || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** The interpreter's `__bool__`. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Namespace || typeof v === 'function') return true;
  if (isDict(v)) return Object.keys(v).length > 0;
  return !!v;
}

/**
 * Values made immutable for rendering ({@link freezeForRender}), with their JSON once written:
 * a harness's tool list is written out by `tojson` at every render, and it never changes.
 */
const frozen = new WeakSet<object>();
const frozenJson = [new WeakMap<object, string>(), new WeakMap<object, string>()] as const;

/**
 * A deep copy of a JSON-shaped value, frozen, whose `tojson` is written once and remembered
 * (templates cannot change values: `set` assigns only variables and namespaces).
 */
export function freezeForRender<T>(value: T): T {
  const copy = structuredClone(value);
  const mark = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    for (const x of Object.values(v)) mark(x);
    Object.freeze(v);
    frozen.add(v);
  };
  mark(copy);
  return copy;
}

/** The library's `toJSON` with its default options (`tojson`, and how lists and dicts print). */
function toJson(v: unknown, undefinedAsNull: boolean): string {
  if (typeof v === 'object' && v !== null && frozen.has(v)) {
    const memo = frozenJson[undefinedAsNull ? 1 : 0];
    let text = memo.get(v);
    if (text === undefined) memo.set(v, (text = writeJson(v, undefinedAsNull)));
    return text;
  }
  return writeJson(v, undefinedAsNull);
}

function writeJson(v: unknown, undefinedAsNull: boolean): string {
  if (v === null) return 'null';
  if (v === undefined) return undefinedAsNull ? 'null' : 'undefined';
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => writeJson(x, undefinedAsNull)).join(', ')}]`;
  const entries = v instanceof Namespace ? [...v.map] : isDict(v) ? Object.entries(v) : undefined;
  if (!entries) throw new Fallback('tojson of a function');
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}: ${writeJson(x, undefinedAsNull)}`).join(', ')}}`;
}

/** How a statement's value is written out (the interpreter's `toString`); none and undefined write nothing. */
function emit(v: unknown, out: string[]): void {
  if (v === null || v === undefined) return;
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
  else if (typeof v === 'function') throw new Fallback('writing a function');
  else out.push(toJson(v, false));
}

/** The library's `slice` (Python's `[start:stop:step]`). */
function slice<T>(array: T[], start: number | undefined, stop: number | undefined, step = 1): T[] {
  const direction = Math.sign(step);
  let a: number;
  let b: number;
  if (direction >= 0) {
    a = (start ??= 0) < 0 ? Math.max(array.length + start, 0) : Math.min(start, array.length);
    b = (stop ??= array.length) < 0 ? Math.max(array.length + stop, 0) : Math.min(stop, array.length);
  } else {
    a = (start ??= array.length - 1) < 0 ? Math.max(array.length + start, -1) : Math.min(start, array.length - 1);
    b = (stop ??= -1) < -1 ? Math.max(array.length + stop, -1) : Math.min(stop, array.length - 1);
  }
  const out: T[] = [];
  for (let i = a; direction * i < direction * b; i += step) out.push(array[i]!);
  return out;
}

const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v);

function binary(op: string, l: unknown, r: unknown): unknown {
  if (op === '==' || op === '!=') {
    // Loose equality on the wrapped values: for two lists or dicts the interpreter compares its own wrappers.
    if (!isPrimitive(l) || !isPrimitive(r)) {
      if ((l === null || l === undefined || r === null || r === undefined)) return op === '!=';
      throw new Fallback('comparing containers');
    }
    // eslint-disable-next-line eqeqeq
    return op === '==' ? l == r : l != r;
  }
  if (l === undefined || r === undefined) {
    if (r === undefined && (op === 'in' || op === 'not in')) return op === 'not in';
    throw new Fallback('operation on undefined');
  }
  if (l === null || r === null) throw new Fallback('operation on none');
  if (op === '~') {
    if (!isPrimitive(l) || !isPrimitive(r)) throw new Fallback('~ of containers');
    return String(l) + String(r);
  }
  if (typeof l === 'number' && typeof r === 'number') {
    // Integers only: the interpreter keeps floats apart (1.0 prints as "1.0"), plain numbers do not.
    if (!int(l) || !int(r)) throw new Fallback('float arithmetic');
    switch (op) {
      case '+': return l + r;
      case '-': return l - r;
      case '*': return l * r;
      case '%': return l % r;
      case '<': return l < r;
      case '>': return l > r;
      case '>=': return l >= r;
      case '<=': return l <= r;
    }
    throw new Fallback(`numeric ${op}`);
  }
  if (Array.isArray(l) && Array.isArray(r)) {
    if (op === '+') return l.concat(r);
    throw new Fallback(`list ${op}`);
  }
  if (Array.isArray(r)) {
    if (op !== 'in' && op !== 'not in') throw new Fallback(`${op} with a list`);
    if (!isPrimitive(l)) throw new Fallback('container in a list');
    const member = r.some((x) => x === l);
    return op === 'in' ? member : !member;
  }
  if (typeof l === 'string' || typeof r === 'string') {
    if (op === '+') {
      if (!isPrimitive(l) || !isPrimitive(r)) throw new Fallback('+ of a string and a container');
      return String(l) + String(r);
    }
  }
  if (typeof l === 'string' && typeof r === 'string' && (op === 'in' || op === 'not in')) return op === 'in' ? r.includes(l) : !r.includes(l);
  if (typeof l === 'string' && isDict(r) && (op === 'in' || op === 'not in')) return op === 'in' ? own.call(r, l) : !own.call(r, l);
  throw new Fallback(`${op} between these values`);
}

/** `value.name` / `value[key]` as the interpreter reads it. */
function member(object: unknown, key: unknown): unknown {
  if (isDict(object) || object instanceof Namespace) {
    if (typeof key !== 'string') throw new Fallback('non-string key');
    if (object instanceof Namespace) return object.map.get(key);
    if (own.call(object, key)) return object[key];
    if (OBJECT_BUILTINS.has(key)) throw new Fallback(`dict builtin ${key}`);
    return undefined;
  }
  if (Array.isArray(object) || typeof object === 'string') {
    if (int(key)) return object.at(key as number);
    throw new Fallback('list or string attribute');
  }
  if (object === null || object === undefined || typeof object === 'number' || typeof object === 'boolean' || typeof object === 'function') {
    if (typeof key !== 'string') throw new Fallback('non-string key');
    return undefined;
  }
  throw new Fallback('attribute of this value');
}

function startsEnds(value: string, args: unknown[], ends: boolean): boolean {
  const p = args[0];
  const test = (s: string) => (ends ? value.endsWith(s) : value.startsWith(s));
  if (typeof p === 'string') return test(p);
  if (Array.isArray(p) && p.every((x) => typeof x === 'string')) return p.some(test);
  throw new Fallback('startswith/endswith argument');
}

/** Python's `str.split`, as the library writes it. */
function split(value: string, args: unknown[]): string[] {
  const sep = args.length > 0 ? args[0] : null;
  const maxsplit = args.length > 1 ? args[1] : -1;
  if (!(typeof sep === 'string' || sep === null) || !int(maxsplit)) throw new Fallback('split arguments');
  const max = maxsplit as number;
  let result: string[] = [];
  if (sep === null) {
    const text = value.trimStart();
    for (const { 0: match, index } of text.matchAll(/\S+/g)) {
      if (max !== -1 && result.length >= max) { result.push(match + text.slice(index + match.length)); break; }
      result.push(match);
    }
  } else {
    if (sep === '') throw new Fallback('empty separator');
    result = value.split(sep);
    if (max !== -1 && result.length > max) result.push(result.splice(max).join(sep));
  }
  return result;
}

const METHODS: Record<string, (value: string, args: unknown[]) => unknown> = {
  startswith: (v, a) => startsEnds(v, a, false),
  endswith: (v, a) => startsEnds(v, a, true),
  split,
};

const TESTS: Record<string, (v: unknown) => boolean> = {
  defined: (v) => v !== undefined,
  undefined: (v) => v === undefined,
  none: (v) => v === null,
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  false: (v) => v === false,
  true: (v) => v === true,
  number: (v) => typeof v === 'number',
  integer: (v) => int(v),
  iterable: (v) => Array.isArray(v) || typeof v === 'string',
  mapping: (v) => isDict(v),
  callable: (v) => typeof v === 'function',
};

function filter(name: string, v: unknown): unknown {
  switch (name) {
    case 'safe': return v;
    case 'tojson': return toJson(v, true);
    case 'length':
      if (Array.isArray(v) || typeof v === 'string') return v.length;
      if (isDict(v)) return Object.keys(v).length;
      throw new Fallback('length of this value');
  }
  throw new Fallback(`filter ${name}`);
}
const FILTERS = new Set(['safe', 'tojson', 'length']);

/** Arguments of a call: positional values, and keyword ones (only `namespace` takes them here). */
function compileArgs(args: Node[]): { positional: Expr[]; keywords: [string, Expr][] } {
  const positional: Expr[] = [];
  const keywords: [string, Expr][] = [];
  for (const a of args) {
    if (a.type === 'KeywordArgumentExpression') keywords.push([(a.key as Node).value as string, expr(a.value as Node)]);
    else if (a.type === 'SpreadExpression' || a.type === 'KeywordSpreadExpression') throw new Unsupported(a.type);
    else positional.push(expr(a));
  }
  return { positional, keywords };
}

function compileCall(node: Node): Expr {
  const callee = node.callee as Node;
  const { positional, keywords } = compileArgs(node.args as Node[]);
  if (callee.type === 'MemberExpression' && !callee.computed && (callee.property as Node).type === 'Identifier') {
    const name = (callee.property as Node).value as string;
    const method = METHODS[name];
    if (!method) throw new Unsupported(`method ${name}`);
    const object = expr(callee.object as Node);
    return (s) => {
      const args = positional.map((p) => p(s));
      if (keywords.length) throw new Fallback('keyword arguments to a method');
      const o = object(s);
      if (typeof o !== 'string') throw new Fallback(`${name} of a non-string`);
      return method(o, args);
    };
  }
  if (callee.type !== 'Identifier') throw new Unsupported(`call of ${callee.type}`);
  const name = callee.value as string;
  return (s) => {
    const args = positional.map((p) => p(s));
    const kw = keywords.map(([k, e]) => [k, e(s)] as const);
    const fn = s.lookup(name);
    if (name === 'namespace' && fn === NAMESPACE) {
      if (args.length) throw new Fallback('namespace from a value');
      const map = new Map<string, unknown>();
      for (const [k, v] of kw) {
        if (map.has(k)) throw new Fallback('repeated keyword');
        map.set(k, v);
      }
      return new Namespace(map);
    }
    if (typeof fn !== 'function') throw new Fallback(`call of ${name}`);
    // The interpreter hands a JavaScript global the raw values: only primitives are the same here.
    if (kw.length || !args.every(isPrimitive)) throw new Fallback('call with containers or keywords');
    const result = (fn as Fn)(...args) ?? null;
    if (result !== null && !isPrimitive(result) && !(Array.isArray(result) && result.every(isPrimitive))) throw new Fallback('call result');
    return result;
  };
}

/** The interpreter's built-in `namespace` (every scope has it); stands for it in lookups. */
const NAMESPACE = Symbol('namespace');

function expr(node: Node | undefined | null): Expr {
  if (!node) return () => undefined;
  switch (node.type) {
    case 'StringLiteral': { const v = node.value as string; return () => v; }
    case 'IntegerLiteral': { const v = node.value as number; return () => v; }
    case 'ArrayLiteral': { const items = (node.value as Node[]).map(expr); return (s) => items.map((e) => e(s)); }
    case 'Identifier': {
      const name = node.value as string;
      return (s) => s.lookup(name);
    }
    case 'MemberExpression': {
      const object = expr(node.object as Node);
      const prop = node.property as Node;
      if (node.computed && prop.type === 'SliceExpression') {
        const [start, stop, step] = [prop.start, prop.stop, prop.step].map((n) => expr(n as Node | undefined));
        return (s) => {
          const o = object(s);
          const [a, b, c] = [start!(s), stop!(s), step!(s)];
          if (![a, b, c].every((x) => x === undefined || int(x))) throw new Fallback('slice bounds');
          if (Array.isArray(o)) return slice(o, a as number | undefined, b as number | undefined, c as number | undefined);
          if (typeof o === 'string') return slice(Array.from(o), a as number | undefined, b as number | undefined, c as number | undefined).join('');
          throw new Fallback('slice of this value');
        };
      }
      if (node.computed) { const key = expr(prop); return (s) => { const o = object(s); return member(o, key(s)); }; }
      const key = prop.value as string | number;
      return (s) => member(object(s), key);
    }
    case 'CallExpression': return compileCall(node);
    case 'UnaryExpression': {
      const op = (node.operator as Node).value as string;
      const arg = expr(node.argument as Node);
      if (op === 'not') return (s) => !truthy(arg(s));
      if (op === '-' || op === '+') {
        const sign = op === '-' ? -1 : 1;
        return (s) => {
          const v = arg(s);
          if (typeof v === 'boolean') return sign * (v ? 1 : 0);
          if (int(v)) return sign * (v as number);
          throw new Fallback('sign of this value');
        };
      }
      throw new Unsupported(`unary ${op}`);
    }
    case 'BinaryExpression': {
      const op = (node.operator as Node).value as string;
      const left = expr(node.left as Node);
      const right = expr(node.right as Node);
      if (op === 'and') return (s) => { const l = left(s); return truthy(l) ? right(s) : l; };
      if (op === 'or') return (s) => { const l = left(s); return truthy(l) ? l : right(s); };
      if (!['==', '!=', '+', '-', '*', '%', '<', '>', '<=', '>=', 'in', 'not in', '~'].includes(op)) throw new Unsupported(`operator ${op}`);
      return (s) => { const l = left(s); return binary(op, l, right(s)); };
    }
    case 'FilterExpression': {
      const f = node.filter as Node;
      if (f.type !== 'Identifier' || !FILTERS.has(f.value as string)) throw new Unsupported('filter');
      const name = f.value as string;
      const operand = expr(node.operand as Node);
      return (s) => filter(name, operand(s));
    }
    case 'TestExpression': {
      const test = TESTS[(node.test as Node).value as string];
      if (!test) throw new Unsupported(`test ${(node.test as Node).value}`);
      const operand = expr(node.operand as Node);
      const negate = !!node.negate;
      return (s) => test(operand(s)) !== negate;
    }
    case 'Ternary': {
      const [c, t, f] = [node.condition, node.trueExpr, node.falseExpr].map((n) => expr(n as Node | undefined));
      return (s) => (truthy(c!(s)) ? t!(s) : f!(s));
    }
  }
  throw new Unsupported(node.type);
}

function block(nodes: Node[]): Stmt {
  const stmts = nodes.map(statement);
  return (s, out) => { for (const st of stmts) st(s, out); };
}

function statement(node: Node): Stmt {
  switch (node.type) {
    case 'Comment': return () => undefined;
    case 'If': {
      const test = expr(node.test as Node);
      const body = block(node.body as Node[]);
      const alternate = block((node.alternate as Node[] | undefined) ?? []);
      return (s, out) => (truthy(test(s)) ? body(s, out) : alternate(s, out));
    }
    case 'Set': {
      const assignee = node.assignee as Node;
      const value = node.value ? expr(node.value as Node) : undefined;
      const body = node.value ? undefined : block((node.body as Node[] | undefined) ?? []);
      const rhs: Expr = value ?? ((s) => { const out: string[] = []; body!(s, out); return out.join(''); });
      if (assignee.type === 'Identifier') {
        const name = assignee.value as string;
        return (s) => { s.vars.set(name, rhs(s)); };
      }
      if (assignee.type === 'MemberExpression' && (assignee.property as Node).type === 'Identifier' && !assignee.computed) {
        const object = expr(assignee.object as Node);
        const key = (assignee.property as Node).value as string;
        return (s) => {
          const v = rhs(s);
          const o = object(s);
          if (!(o instanceof Namespace)) throw new Fallback('set on a non-namespace');
          o.map.set(key, v);
        };
      }
      throw new Unsupported('set target');
    }
    case 'For': {
      if ((node.loopvar as Node).type !== 'Identifier' || (node.iterable as Node).type === 'SelectExpression') throw new Unsupported('for form');
      const name = (node.loopvar as Node).value as string;
      const iterable = expr(node.iterable as Node);
      const body = block(node.body as Node[]);
      const otherwise = block((node.defaultBlock as Node[] | undefined) ?? []);
      return (s, out) => {
        const scope = new Scope(s);
        const it = iterable(scope);
        const items = Array.isArray(it) ? it : isDict(it) ? Object.keys(it) : undefined;
        if (!items) throw new Fallback('for over this value');
        const n = items.length;
        for (let i = 0; i < n; i++) {
          scope.vars.set('loop', {
            index: i + 1, index0: i, revindex: n - i, revindex0: n - i - 1, first: i === 0, last: i === n - 1, length: n,
            previtem: i > 0 ? items[i - 1] : undefined, nextitem: i < n - 1 ? items[i + 1] : undefined,
          });
          scope.vars.set(name, items[i]);
          body(scope, out);
        }
        if (n === 0) otherwise(scope, out);
      };
    }
  }
  const e = expr(node);
  return (s, out) => emit(e(s), out);
}

/** A compiled template: the variables (plain values, globals included) in, the rendered text out. */
export type CompiledTemplate = (variables: Record<string, unknown>) => string;

/** Compile a parsed template, or undefined when it uses a construct the compiler does not handle. */
export function compileTemplate(program: { body: unknown[] }): CompiledTemplate | undefined {
  let run: Stmt;
  try {
    run = block(program.body as Node[]);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  return (variables) => {
    const root = new Scope();
    root.vars.set('namespace', NAMESPACE);
    for (const [k, v] of Object.entries(variables)) if (v !== undefined) root.vars.set(k, v);
    const out: string[] = [];
    run(root, out);
    return out.join('');
  };
}
