/**
 * A chat template's parsed form (from @huggingface/jinja) compiled to the source of one
 * JavaScript function over plain values. @huggingface/jinja's interpreter wraps every value it
 * touches in a runtime object (a small render of Qwen3's template allocates thousands); the proxy
 * renders at every call, so that allocation and its garbage were most of a call's cost. The
 * function computes what the interpreter computes — same operators, truthiness, member access,
 * `tojson`, loop variables and scopes, down to its quirks (`==` is JavaScript's loose equality on
 * the values, booleans print as `true`) — for the constructs chat templates use. A construct
 * outside that set makes {@link compileTemplate} return undefined (the interpreter renders that
 * template), and a value outside it at render time (an operation on `none`, a float in
 * arithmetic, comparing two lists) throws {@link Fallback}: that render is redone by the
 * interpreter, which is always the reference (its result or its error). Tests compare both on
 * every golden case.
 *
 * An {@link Opaque} value (a message's text not known yet) may only be written out: written to
 * the output it is its placeholder; tested it is a string (`is string`, `is defined`, `== none`
 * are false or true of every string alike); joined to strings by `+` or `~` it is an
 * {@link OpaqueConcat}, under the same rules; any other use — its truth, a comparison, a method,
 * a filter but `safe`, a member, a loop, a global's argument, or writing it into a `set` block,
 * whose text the template could then inspect — throws {@link Fallback}. A render that finishes
 * with one is therefore the render of every string in its place.
 */

import { Opaque } from './neutralize';

/** Raised while rendering where the compiled form does not decide the interpreter's result. */
export class Fallback extends Error {}

/** Raised at compile time for a construct the compiler does not handle. */
class Unsupported extends Error {}

/** Strings and {@link Opaque} texts joined by `+` or `~`: a string with parts not known yet. */
class OpaqueConcat {
  constructor(readonly parts: readonly (string | Opaque)[]) {}
}

const isOpaque = (v: unknown): v is Opaque | OpaqueConcat => v instanceof Opaque || v instanceof OpaqueConcat;
const partsOf = (v: string | Opaque | OpaqueConcat) => (v instanceof OpaqueConcat ? v.parts : [v]);

/** A Jinja `namespace(...)` object: attributes that `set ns.x = …` can change. */
class Namespace {
  constructor(readonly map: Map<string, unknown>) {}
}

type Fn = (...args: unknown[]) => unknown;
type Node = { type: string; [k: string]: unknown };
const own = Object.prototype.hasOwnProperty;
/** The interpreter's ObjectValue builtins: reading them as attributes needs the interpreter. */
const OBJECT_BUILTINS = new Set(['get', 'items', 'keys', 'values', 'dictsort']);

const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Namespace) && !isOpaque(v);
const isPrimitive = (v: unknown) => v === null || v === undefined || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** The interpreter's `__bool__`. */
function truthy(v: unknown): boolean {
  if (isOpaque(v)) throw new Fallback('truth of a text not known yet');
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
  else if (v instanceof Opaque) out.push(v.placeholder);
  else if (v instanceof OpaqueConcat) for (const p of v.parts) out.push(typeof p === 'string' ? p : p.placeholder);
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
  if (isOpaque(l) || isOpaque(r)) {
    // Joining strings: the same for every string in an opaque text's place. Nothing else is.
    if ((op === '+' || op === '~') && (typeof l === 'string' || isOpaque(l)) && (typeof r === 'string' || isOpaque(r))) return new OpaqueConcat([...partsOf(l), ...partsOf(r)]);
    if ((op === '==' || op === '!=') && (l === null || l === undefined || r === null || r === undefined)) return op === '!=';
    throw new Fallback(`${op} with a text not known yet`);
  }
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
  string: (v) => typeof v === 'string' || isOpaque(v),
  boolean: (v) => typeof v === 'boolean',
  false: (v) => v === false,
  true: (v) => v === true,
  number: (v) => typeof v === 'number',
  integer: (v) => int(v),
  iterable: (v) => Array.isArray(v) || typeof v === 'string' || isOpaque(v),
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

/** The interpreter's built-in `namespace` (every scope has it); stands for it in lookups. */
const NAMESPACE = Symbol('namespace');

/** A scope's variable not set yet (a set to undefined is set: it hides the outer one). */
const UNSET = Symbol('unset');

const fail = (why: string): never => { throw new Fallback(why); };

/** `name(args…)`: a global function on primitives, or `namespace(k=v, …)`. */
function call(fn: unknown, name: string, args: unknown[], kw: [string, unknown][]): unknown {
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
}

/** `value.name(args…)`: the string methods templates use. */
function callMethod(name: string, o: unknown, args: unknown[]): unknown {
  if (typeof o !== 'string') throw new Fallback(`${name} of a non-string`);
  return METHODS[name]!(o, args);
}

/** `value[start:stop:step]`. */
function sliceOf(o: unknown, a: unknown, b: unknown, c: unknown): unknown {
  if (![a, b, c].every((x) => x === undefined || int(x))) throw new Fallback('slice bounds');
  if (Array.isArray(o)) return slice(o, a as number | undefined, b as number | undefined, c as number | undefined);
  if (typeof o === 'string') return slice(Array.from(o), a as number | undefined, b as number | undefined, c as number | undefined).join('');
  throw new Fallback('slice of this value');
}

function sign(v: unknown, by: number): number {
  if (typeof v === 'boolean') return by * (v ? 1 : 0);
  if (int(v)) return by * (v as number);
  throw new Fallback('sign of this value');
}

/** What a statement's value writes (the interpreter's `toString`); none and undefined write nothing. */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  const out: string[] = [];
  emit(v, out);
  return out.join('');
}

/** What a statement inside a `set` block writes: its text becomes a value, so an {@link Opaque} may not be in it. */
function captured(v: unknown): string {
  if (isOpaque(v)) throw new Fallback('a text not known yet written into a set block');
  return text(v);
}

function setAttribute(o: unknown, key: string, v: unknown): void {
  if (!(o instanceof Namespace)) throw new Fallback('set on a non-namespace');
  o.map.set(key, v);
}

function loopItems(it: unknown): unknown[] {
  if (Array.isArray(it)) return it;
  if (isDict(it)) return Object.keys(it);
  throw new Fallback('for over this value');
}

/** `==`, `!=` and `+` on two strings (most of a chat template's operations) without {@link binary}'s dispatch. */
const eq = (l: unknown, r: unknown) => (typeof l === 'string' && typeof r === 'string' ? l === r : binary('==', l, r));
const ne = (l: unknown, r: unknown) => (typeof l === 'string' && typeof r === 'string' ? l !== r : binary('!=', l, r));
const add = (l: unknown, r: unknown) => (typeof l === 'string' && typeof r === 'string' ? l + r : binary('+', l, r));

/** The helpers the generated source calls, by the names it calls them. */
const HELPERS = { truthy, binary, eq, ne, add, member, filter, TESTS, call, callMethod, sliceOf, sign, text, captured, setAttribute, loopItems, fail, own, NAMESPACE, UNSET };

/** A scope of the template: the root (its variables) or one `for` (new at each run of the loop). */
interface ScopeInfo {
  parent?: ScopeInfo;
  /** Name → the JavaScript variable holding it in this scope. */
  slots: Map<string, string>;
  /** Names certainly set where the code being compiled runs (a loop's body: `loop` and its variable). */
  set?: ReadonlySet<string>;
}

/**
 * Compiles a parsed template to the source of one JavaScript function. Each scope's variables
 * are JavaScript variables: a `for` scope's start unset (see {@link UNSET}) at each run of the
 * loop, and a name reads the innermost scope that has set it, as the interpreter's lookup does;
 * the root's are read once from the variables. The names a scope can set are known from the
 * template (`set` in its body, outside inner loops; `loop` and the loop variable), so a lookup is
 * a few comparisons of locals instead of map lookups up a chain of scopes.
 */
class SourceCompiler {
  private next = 0;
  readonly root: ScopeInfo = { slots: new Map() };

  private fresh(prefix: string): string {
    return `${prefix}${this.next++}`;
  }

  /** The root scope's variable of a name (made on first use). */
  private rootSlot(name: string): string {
    let slot = this.root.slots.get(name);
    if (!slot) this.root.slots.set(name, (slot = this.fresh('r')));
    return slot;
  }

  lookup(name: string, scope: ScopeInfo): string {
    const chain: string[] = [];
    for (let s: ScopeInfo | undefined = scope; s && s !== this.root; s = s.parent) {
      const slot = s.slots.get(name);
      if (slot && s.set?.has(name)) return chain.reduceRight((code, inner) => `(${inner} !== UNSET ? ${inner} : ${code})`, slot);
      if (slot) chain.push(slot);
    }
    let code = this.rootSlot(name);
    for (let i = chain.length - 1; i >= 0; i--) code = `(${chain[i]} !== UNSET ? ${chain[i]} : ${code})`;
    return code;
  }

  /** The variable a `set` of `name` in `scope` writes. */
  private assign(name: string, scope: ScopeInfo): string {
    return scope === this.root ? this.rootSlot(name) : scope.slots.get(name)!;
  }

  args(args: Node[], scope: ScopeInfo): { positional: string[]; keywords: [string, string][] } {
    const positional: string[] = [];
    const keywords: [string, string][] = [];
    for (const a of args) {
      if (a.type === 'KeywordArgumentExpression') keywords.push([(a.key as Node).value as string, this.expr(a.value as Node, scope)]);
      else if (a.type === 'SpreadExpression' || a.type === 'KeywordSpreadExpression') throw new Unsupported(a.type);
      else positional.push(this.expr(a, scope));
    }
    return { positional, keywords };
  }

  call(node: Node, scope: ScopeInfo): string {
    const callee = node.callee as Node;
    const { positional, keywords } = this.args(node.args as Node[], scope);
    if (callee.type === 'MemberExpression' && !callee.computed && (callee.property as Node).type === 'Identifier') {
      const name = (callee.property as Node).value as string;
      if (!METHODS[name]) throw new Unsupported(`method ${name}`);
      const args = `[${positional.join(', ')}]`;
      if (keywords.length) return `(${args}, ${keywords.map(([, v]) => v).join(', ')}, fail('keyword arguments to a method'))`;
      return `callMethod(${JSON.stringify(name)}, ${this.expr(callee.object as Node, scope)}, ${args})`;
    }
    if (callee.type !== 'Identifier') throw new Unsupported(`call of ${callee.type}`);
    const name = callee.value as string;
    const kw = keywords.map(([k, v]) => `[${JSON.stringify(k)}, ${v}]`);
    return `call(${this.lookup(name, scope)}, ${JSON.stringify(name)}, [${positional.join(', ')}], [${kw.join(', ')}])`;
  }

  expr(node: Node | undefined | null, scope: ScopeInfo): string {
    if (!node) return 'undefined';
    switch (node.type) {
      case 'StringLiteral': return JSON.stringify(node.value as string);
      case 'IntegerLiteral': {
        const v = node.value;
        if (typeof v !== 'number' || !Number.isFinite(v)) throw new Unsupported('integer literal');
        return `(${v})`;
      }
      case 'ArrayLiteral': return `[${(node.value as Node[]).map((n) => this.expr(n, scope)).join(', ')}]`;
      case 'Identifier': return this.lookup(node.value as string, scope);
      case 'MemberExpression': {
        const object = this.expr(node.object as Node, scope);
        const prop = node.property as Node;
        if (node.computed && prop.type === 'SliceExpression') {
          const [a, b, c] = [prop.start, prop.stop, prop.step].map((n) => this.expr(n as Node | undefined, scope));
          return `sliceOf(${object}, ${a}, ${b}, ${c})`;
        }
        if (node.computed) return `member(${object}, ${this.expr(prop, scope)})`;
        const key = prop.value;
        if (typeof key !== 'string' && typeof key !== 'number') throw new Unsupported('member key');
        return `member(${object}, ${JSON.stringify(key)})`;
      }
      case 'CallExpression': return this.call(node, scope);
      case 'UnaryExpression': {
        const op = (node.operator as Node).value as string;
        const arg = this.expr(node.argument as Node, scope);
        if (op === 'not') return `!truthy(${arg})`;
        if (op === '-' || op === '+') return `sign(${arg}, ${op === '-' ? -1 : 1})`;
        throw new Unsupported(`unary ${op}`);
      }
      case 'BinaryExpression': {
        const op = (node.operator as Node).value as string;
        const left = this.expr(node.left as Node, scope);
        const right = this.expr(node.right as Node, scope);
        if (op === 'and' || op === 'or') {
          // The value of the side that decides, as Python's `and`/`or` give it.
          const t = this.fresh('t');
          this.temps.push(t);
          return op === 'and' ? `(truthy(${t} = ${left}) ? ${right} : ${t})` : `(truthy(${t} = ${left}) ? ${t} : ${right})`;
        }
        if (!['==', '!=', '+', '-', '*', '%', '<', '>', '<=', '>=', 'in', 'not in', '~'].includes(op)) throw new Unsupported(`operator ${op}`);
        const special = op === '==' ? 'eq' : op === '!=' ? 'ne' : op === '+' ? 'add' : undefined;
        return special ? `${special}(${left}, ${right})` : `binary(${JSON.stringify(op)}, ${left}, ${right})`;
      }
      case 'FilterExpression': {
        const f = node.filter as Node;
        if (f.type !== 'Identifier' || !FILTERS.has(f.value as string)) throw new Unsupported('filter');
        return `filter(${JSON.stringify(f.value as string)}, ${this.expr(node.operand as Node, scope)})`;
      }
      case 'TestExpression': {
        const name = (node.test as Node).value as string;
        if (typeof name !== 'string' || !own.call(TESTS, name)) throw new Unsupported(`test ${name}`);
        return `(TESTS[${JSON.stringify(name)}](${this.expr(node.operand as Node, scope)}) !== ${!!node.negate})`;
      }
      case 'Ternary': {
        const [c, t, f] = [node.condition, node.trueExpr, node.falseExpr].map((n) => this.expr(n as Node | undefined, scope));
        return `(truthy(${c}) ? ${t} : ${f})`;
      }
    }
    throw new Unsupported(node.type);
  }

  /** Temporaries of `and`/`or`, declared once at the top of the function. */
  readonly temps: string[] = [];

  block(nodes: Node[], scope: ScopeInfo, out: string): string {
    return nodes.map((n) => this.statement(n, scope, out)).join('\n');
  }

  /** The names a scope's statements can set: `set` targets, in `if` branches and `set` blocks too, not in inner loops. */
  private setsIn(nodes: Node[] | undefined, names: Set<string>): void {
    for (const n of nodes ?? []) {
      if (n.type === 'Set' && (n.assignee as Node).type === 'Identifier') names.add((n.assignee as Node).value as string);
      if (n.type === 'If') { this.setsIn(n.body as Node[], names); this.setsIn(n.alternate as Node[] | undefined, names); }
      if (n.type === 'Set' && !n.value) this.setsIn(n.body as Node[] | undefined, names);
    }
  }

  statement(node: Node, scope: ScopeInfo, out: string): string {
    switch (node.type) {
      case 'Comment': return '';
      case 'If': {
        const test = this.expr(node.test as Node, scope);
        const alternate = (node.alternate as Node[] | undefined) ?? [];
        return `if (truthy(${test})) {\n${this.block(node.body as Node[], scope, out)}\n}${alternate.length ? ` else {\n${this.block(alternate, scope, out)}\n}` : ''}`;
      }
      case 'Set': {
        const assignee = node.assignee as Node;
        let pre = '';
        let rhs: string;
        if (node.value) rhs = this.expr(node.value as Node, scope);
        else {
          const o = this.fresh('o');
          pre = `let ${o} = '';\n${this.block((node.body as Node[] | undefined) ?? [], scope, o)}\n`;
          rhs = o;
        }
        if (assignee.type === 'Identifier') return `{\n${pre}${this.assign(assignee.value as string, scope)} = ${rhs};\n}`;
        if (assignee.type === 'MemberExpression' && (assignee.property as Node).type === 'Identifier' && !assignee.computed) {
          const v = this.fresh('v');
          return `{\n${pre}const ${v} = ${rhs};\nsetAttribute(${this.expr(assignee.object as Node, scope)}, ${JSON.stringify((assignee.property as Node).value as string)}, ${v});\n}`;
        }
        throw new Unsupported('set target');
      }
      case 'For': {
        if ((node.loopvar as Node).type !== 'Identifier' || (node.iterable as Node).type === 'SelectExpression') throw new Unsupported('for form');
        const name = (node.loopvar as Node).value as string;
        const body = node.body as Node[];
        const otherwise = (node.defaultBlock as Node[] | undefined) ?? [];
        const names = new Set(['loop', name]);
        this.setsIn(body, names);
        this.setsIn(otherwise, names);
        const inner: ScopeInfo = { parent: scope, slots: new Map([...names].map((n) => [n, this.fresh('f')])) };
        const [items, n, i] = [this.fresh('items'), this.fresh('n'), this.fresh('i')];
        const slots = [...inner.slots.values()];
        return `{\nlet ${slots.map((s) => `${s} = UNSET`).join(', ')};
const ${items} = loopItems(${this.expr(node.iterable as Node, inner)});
const ${n} = ${items}.length;
for (let ${i} = 0; ${i} < ${n}; ${i}++) {
${inner.slots.get('loop')} = { index: ${i} + 1, index0: ${i}, revindex: ${n} - ${i}, revindex0: ${n} - ${i} - 1, first: ${i} === 0, last: ${i} === ${n} - 1, length: ${n}, previtem: ${i} > 0 ? ${items}[${i} - 1] : undefined, nextitem: ${i} < ${n} - 1 ? ${items}[${i} + 1] : undefined };
${inner.slots.get(name)} = ${items}[${i}];
${this.block(body, { ...inner, set: new Set(['loop', name]) }, out)}
}
${otherwise.length ? `if (${n} === 0) {\n${this.block(otherwise, inner, out)}\n}` : ''}
}`;
      }
    }
    if (node.type === 'StringLiteral') return `${out} += ${JSON.stringify(node.value as string)};`;
    return `${out} += ${out === 'out' ? 'text' : 'captured'}(${this.expr(node, scope)});`;
  }
}

/**
 * A compiled template: its variables in, the rendered text out. They come from three objects,
 * read as if spread into one in this order (a name the later one has, even as undefined, is
 * the later one's): the variables, the globals, the prepared values — read by name, so that no
 * object of them all is made at each render.
 */
export type CompiledTemplate = (variables: Record<string, unknown>, globals: Record<string, unknown>, prepared: Record<string, unknown>) => string;

/**
 * Compile a parsed template to one JavaScript function (see {@link SourceCompiler}), or
 * undefined when it uses a construct the compiler does not handle. The source holds no text of
 * the template but string literals written by `JSON.stringify`, and names it makes itself.
 */
export function compileTemplate(program: { body: unknown[] }): CompiledTemplate | undefined {
  const c = new SourceCompiler();
  let body: string;
  try {
    body = c.block(program.body as Node[], c.root, 'out');
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  // The root's variables: what was passed (an undefined value is unset), `namespace` unless passed.
  const roots = [...c.root.slots].map(([name, slot]) => {
    const key = JSON.stringify(name);
    const read = `own.call(prepared, ${key}) ? prepared[${key}] : own.call(globals, ${key}) ? globals[${key}] : own.call(vars, ${key}) ? vars[${key}] : undefined`;
    return name === 'namespace' ? `let ${slot} = ${read};\nif (${slot} === undefined) ${slot} = NAMESPACE;` : `let ${slot} = ${read};`;
  });
  const source = `const { ${Object.keys(HELPERS).join(', ')} } = helpers;
return function render(vars, globals, prepared) {
${roots.join('\n')}
${c.temps.length ? `let ${c.temps.join(', ')};` : ''}
let out = '';
${body}
return out;
};`;
  return new Function('helpers', source)(HELPERS) as CompiledTemplate;
}
