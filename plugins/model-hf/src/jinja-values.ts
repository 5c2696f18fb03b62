/**
 * The values a compiled chat template (jinja-compile.ts) works on: plain JavaScript values read
 * as @huggingface/jinja's interpreter reads its wrapped ones (truthiness, how a value is written
 * out, `tojson`), a Jinja `namespace`, and the texts not known yet ({@link Opaque} and
 * {@link OpaqueConcat}). Where the compiled form cannot decide the interpreter's result, it throws
 * {@link Fallback} and the interpreter renders.
 */

import { Opaque } from './neutralize';

/** Raised while rendering where the compiled form does not decide the interpreter's result. */
export class Fallback extends Error {}

/** Strings and {@link Opaque} texts joined by `+` or `~`: a string with parts not known yet. */
export class OpaqueConcat {
  constructor(readonly parts: readonly (string | Opaque)[]) {}
}

export const isOpaque = (v: unknown): v is Opaque | OpaqueConcat => v instanceof Opaque || v instanceof OpaqueConcat;
export const partsOf = (v: string | Opaque | OpaqueConcat) => (v instanceof OpaqueConcat ? v.parts : [v]);

/** A Jinja `namespace(...)` object: attributes that `set ns.x = …` can change. */
export class Namespace {
  constructor(readonly map: Map<string, unknown>) {}
}

export const own = Object.prototype.hasOwnProperty;

export const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Namespace) && !isOpaque(v);
export const isPrimitive = (v: unknown) => v === null || v === undefined || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** The interpreter's `__bool__`. */
export function truthy(v: unknown): boolean {
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
export function toJson(v: unknown, undefinedAsNull: boolean): string {
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
export function emit(v: unknown, out: string[]): void {
  if (v === null || v === undefined) return;
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
  else if (typeof v === 'function') throw new Fallback('writing a function');
  else if (v instanceof Opaque) out.push(v.placeholder);
  else if (v instanceof OpaqueConcat) for (const p of v.parts) out.push(typeof p === 'string' ? p : p.placeholder);
  else out.push(toJson(v, false));
}
