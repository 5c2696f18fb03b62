/**
 * A tiny WebAssembly assembler: just the opcodes the matmul module needs (i32 arithmetic,
 * structured control flow, f32 and v128 loads/stores, f32x4 add/mul). There is no WAT
 * toolchain at build time, so the module is emitted as bytes at load time (~1 KB, < 1 ms).
 */

/** Value types. */
export const I32 = 0x7f;
export const V128 = 0x7b;

function uleb(n: number, out: number[]): void {
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
}

function sleb(n: number, out: number[]): void {
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) { out.push(b); return; }
    out.push(b | 0x80);
  }
}

/** A function body under construction; every method appends and returns `this`. */
export class Code {
  readonly bytes: number[] = [];
  op(...b: number[]): this { this.bytes.push(...b); return this; }
  private simd(op: number): this { this.bytes.push(0xfd); uleb(op, this.bytes); return this; }
  private memarg(align: number, offset: number): this { this.bytes.push(align); uleb(offset, this.bytes); return this; }

  get(i: number): this { return this.op(0x20, i); }
  set(i: number): this { return this.op(0x21, i); }
  tee(i: number): this { return this.op(0x22, i); }
  i32(n: number): this { this.bytes.push(0x41); sleb(n | 0, this.bytes); return this; }
  add(): this { return this.op(0x6a); }
  sub(): this { return this.op(0x6b); }
  mul(): this { return this.op(0x6c); }
  ltU(): this { return this.op(0x49); }
  gtU(): this { return this.op(0x4b); }
  gtS(): this { return this.op(0x4a); }
  leU(): this { return this.op(0x4d); }
  eq(): this { return this.op(0x46); }
  eqz(): this { return this.op(0x45); }
  and(): this { return this.op(0x71); }
  /** `local += n` (i32). */
  inc(local: number, n: number | (() => void)): this {
    this.get(local);
    if (typeof n === 'number') this.i32(n); else n();
    return this.add().set(local);
  }

  f32Load(offset = 0): this { return this.op(0x2a).memarg(2, offset); }
  i32Store(offset = 0): this { return this.op(0x36).memarg(2, offset); }
  f32Eq(): this { return this.op(0x5b); }
  select(): this { return this.op(0x1b); }
  f32Store(offset = 0): this { return this.op(0x38).memarg(2, offset); }
  f32Zero(): this { return this.op(0x43, 0, 0, 0, 0); }
  v128Load(offset = 0): this { return this.simd(0x00).memarg(0, offset); }
  v128Store(offset = 0): this { return this.simd(0x0b).memarg(0, offset); }
  v128Load32Splat(offset = 0): this { return this.simd(0x09).memarg(0, offset); }
  v128Zero(): this { this.simd(0x0c); for (let i = 0; i < 16; i++) this.bytes.push(0); return this; }
  f32x4Add(): this { return this.simd(0xe4); }
  f32x4Sub(): this { return this.simd(0xe5); }
  f32x4Mul(): this { return this.simd(0xe6); }
  f32x4Max(): this { return this.simd(0xe9); }
  f32x4Gt(): this { return this.simd(0x44); }
  f32x4Nearest(): this { return this.simd(0x6a); }
  f32x4Splat(): this { return this.simd(0x13); }
  f32x4ExtractLane(lane: number): this { return this.simd(0x1f).op(lane); }
  i32x4TruncSatF32x4(): this { return this.simd(0xf8); }
  i32x4Add(): this { return this.simd(0xae); }
  i32x4Shl(): this { return this.simd(0xab); }
  i32x4Splat(): this { return this.simd(0x11); }
  i32x4Ne(): this { return this.simd(0x38); }
  i32x4LtS(): this { return this.simd(0x39); }
  v128ConstI32(a: number, b: number, c: number, d: number): this { this.simd(0x0c); this.bytes.push(...new Uint8Array(new Int32Array([a, b, c, d]).buffer)); return this; }
  /** Four bytes at the address, zero-extended to i32x4 lanes. */
  v128Load8x4U(offset = 0): this { return this.simd(0x5c).memarg(0, offset).simd(0x89).simd(0xa9); }
  v128And(): this { return this.simd(0x4e); }
  v128Bitselect(): this { return this.simd(0x52); }
  f32(n: number): this { this.bytes.push(0x43, ...new Uint8Array(new Float32Array([n]).buffer)); return this; }
  f32Add(): this { return this.op(0x92); }
  f32Mul(): this { return this.op(0x94); }
  f32Div(): this { return this.op(0x95); }
  f32Max(): this { return this.op(0x97); }

  /** `loop … br_if 0 (cond) end`: the body runs at least once; `cond` leaves the continue flag. */
  doWhile(body: () => void, cond: () => void): this {
    this.op(0x03, 0x40); body(); cond(); return this.op(0x0d, 0, 0x0b);
  }
  /** `block loop (cond) br_if-not-out body br 0 end end`: runs `body` while `cond` leaves non-zero. */
  whileDo(cond: () => void, body: () => void): this {
    this.op(0x02, 0x40, 0x03, 0x40); cond(); this.op(0x45, 0x0d, 1); body();
    return this.op(0x0c, 0, 0x0b, 0x0b);
  }
  /** `if … else … end` on the i32 on the stack; `result` types the value both arms leave. */
  ifElse(then: () => void, otherwise?: () => void, result?: number): this {
    this.op(0x04, result ?? 0x40); then();
    if (otherwise) { this.op(0x05); otherwise(); }
    return this.op(0x0b);
  }
}

/** Value type F32. */
export const F32 = 0x7d;

/** One exported function: parameters (i32 unless typed), no results, extra locals by type. */
export interface FunctionDef {
  name: string;
  params: number | number[];
  locals: Array<[count: number, type: number]>;
  code: Code;
}

function vec(items: number[][]): number[] {
  const out: number[] = [];
  uleb(items.length, out);
  for (const it of items) out.push(...it);
  return out;
}
function name(s: string): number[] {
  return vec([...s].map((c) => [c.charCodeAt(0)]));
}
function section(id: number, bytes: number[], out: number[]): void {
  out.push(id);
  uleb(bytes.length, out);
  out.push(...bytes);
}

/** A module importing `env.memory` (shared when `maxPages` is given) and exporting `fns`. */
export function assemble(fns: FunctionDef[], maxPages?: number): Uint8Array {
  const out = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const params = (f: FunctionDef) => (typeof f.params === 'number' ? Array.from({ length: f.params }, () => I32) : f.params);
  section(1, vec(fns.map((f) => [0x60, ...vec(params(f).map((t) => [t])), 0])), out);
  const limits: number[] = [];
  if (maxPages === undefined) limits.push(0x00, 1);
  else { limits.push(0x03, 1); uleb(maxPages, limits); }
  section(2, vec([[...name('env'), ...name('memory'), 0x02, ...limits]]), out);
  section(3, vec(fns.map((_, i) => { const o: number[] = []; uleb(i, o); return o; })), out);
  section(7, vec(fns.map((f, i) => { const o = [...name(f.name), 0x00]; uleb(i, o); return o; })), out);
  section(10, vec(fns.map((f) => {
    const locals = vec(f.locals.map(([n, t]) => { const o: number[] = []; uleb(n, o); o.push(t); return o; }));
    const body = [...locals, ...f.code.bytes, 0x0b];
    const o: number[] = [];
    uleb(body.length, o);
    return [...o, ...body];
  })), out);
  return new Uint8Array(out);
}

/** The slice of the `WebAssembly` global used here (the project's type libraries omit it). */
export interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  validate(bytes: Uint8Array): boolean;
}
/** A compiled module (opaque). */
export interface WasmModule { readonly __brand?: 'WebAssembly.Module' }
/** A linear memory. */
export interface WasmMemory { readonly buffer: ArrayBufferLike; grow(pages: number): number }
/** `globalThis.WebAssembly`, when the runtime has it. */
export const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
