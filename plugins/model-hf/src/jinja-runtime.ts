/**
 * The operations the source compiled from a chat template calls (jinja-compile.ts): operators,
 * member access, tests, filters, calls, string methods and slices, each as @huggingface/jinja's
 * interpreter computes it for the values of jinja-values.ts, throwing {@link Fallback} outside
 * that set.
 */

import { emit, Fallback, isDict, isOpaque, isPrimitive, Namespace, own, OpaqueConcat, partsOf, toJson, truthy } from './jinja-values';

type Fn = (...args: unknown[]) => unknown;
/** The interpreter's ObjectValue builtins: reading them as attributes needs the interpreter. */
const OBJECT_BUILTINS = new Set(['get', 'items', 'keys', 'values', 'dictsort']);

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

export const METHODS: Record<string, (value: string, args: unknown[]) => unknown> = {
  startswith: (v, a) => startsEnds(v, a, false),
  endswith: (v, a) => startsEnds(v, a, true),
  split,
};

export const TESTS: Record<string, (v: unknown) => boolean> = {
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
export const FILTERS = new Set(['safe', 'tojson', 'length']);

/** The interpreter's built-in `namespace` (every scope has it); stands for it in lookups. */
export const NAMESPACE = Symbol('namespace');

/** A scope's variable not set yet (a set to undefined is set: it hides the outer one). */
export const UNSET = Symbol('unset');

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
export const HELPERS = { truthy, binary, eq, ne, add, member, filter, TESTS, call, callMethod, sliceOf, sign, text, captured, setAttribute, loopItems, fail, own, NAMESPACE, UNSET };
