/**
 * Masked multi-head attention for the `cpu` kernels, in blocks of {@link ROW_BLOCK} query rows:
 * each block multiplies only the key columns its rows may see (about half of them under a
 * causal mask), and the backward pass skips zero probabilities the same way. Two paths:
 * `wasmAttention*` keep every operand resident in the engine's memory and run the softmax on
 * each score block in wasm before it is written out; `jsAttention*` use any gemm and JS loops.
 */
import type { Operand, WasmGemm } from './wasm-gemm';

/** A matrix operand in a JS array. */
export interface JsOperand { data: Float32Array; offset: number; ld: number }
/** C (+)= op(A)·op(B) on strided operands. */
export type Gemm = (A: JsOperand, transA: boolean, B: JsOperand, transB: boolean, C: JsOperand, m: number, k: number, n: number, accumulate: boolean) => void;

/** Query rows per block. */
export const ROW_BLOCK = 64;

const POW2 = Float64Array.from({ length: 256 }, (_, i) => 2 ** (i - 128));
const ROUND = 6755399441055744; // 1.5·2⁵²: adding and subtracting it rounds a double to an integer
/** exp(x) for x ≤ 0 with relative error < 1e-8: 2ⁿ from a table times a degree-7 Taylor polynomial (2× Math.exp's speed). */
export function expNonPositive(x: number): number {
  if (x < -87) return 0;
  const n = x * Math.LOG2E + ROUND - ROUND, r = x - n * Math.LN2;
  return (1 + r * (1 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720 + r / 5040))))))) * POW2[(n | 0) + 128]!;
}

/** Per row i, [first, end) at [2i, 2i + 1] covering every allowed j ([0, 0) if none). */
function maskRanges(T: number, allowed: Uint8Array): Int32Array {
  const ranges = new Int32Array(2 * T);
  for (let i = 0, row = 0; i < T; i++, row += T) {
    let a = 0, b = T;
    while (a < T && !allowed[row + a]) a++;
    while (b > a && !allowed[row + b - 1]) b--;
    if (b > a) { ranges[2 * i] = a; ranges[2 * i + 1] = b; }
  }
  return ranges;
}

/** Calls `fn(i0, rows, lo, cols)` per block of rows with the union [lo, lo + cols) of their ranges. */
function forEachBlock(T: number, ranges: Int32Array, fn: (i0: number, rows: number, lo: number, cols: number) => void): void {
  for (let i0 = 0; i0 < T; i0 += ROW_BLOCK) {
    const rows = Math.min(ROW_BLOCK, T - i0);
    let lo = T, hi = 0;
    for (let i = i0; i < i0 + rows; i++) {
      const first = ranges[2 * i]!, end = ranges[2 * i + 1]!;
      if (end > first) { lo = Math.min(lo, first); hi = Math.max(hi, end); }
    }
    fn(i0, rows, hi > lo ? lo : 0, hi > lo ? hi - lo : 0);
  }
}

/** Forward with all operands resident in the engine's memory; see {@link ComputeKernels.attention}. */
export function wasmAttention(e: WasmGemm, q: Float32Array, k: Float32Array, v: Float32Array, allowed: Uint8Array, out: Float32Array, probs: Float32Array, T: number, heads: number, headDim: number): void {
  const W = heads * headDim, scale = 1 / Math.sqrt(headDim), ranges = maskRanges(T, allowed), mark = e.mark();
  try {
    const qa = e.alloc(T * W, q), ka = e.alloc(T * W, k), va = e.alloc(T * W, v), oa = e.alloc(T * W), pa = e.alloc(heads * T * T);
    const ma = e.alloc(Math.ceil((T * T) / 4) + 4); // the mask, and slack for reads past its last row
    e.u8.set(allowed.subarray(0, T * T), ma);
    e.f32.fill(0, oa >> 2, (oa >> 2) + T * W);
    e.f32.fill(0, pa >> 2, (pa >> 2) + heads * T * T);
    const at = (addr: number, offset: number, ld: number): Operand => ({ addr, offset, ld });
    for (let h = 0, c = 0; h < heads; h++, c += headDim) {
      const base = h * T * T;
      forEachBlock(T, ranges, (i0, rows, lo, cols) => {
        if (cols === 0) return;
        const P = at(pa, base + i0 * T + lo, T);
        e.gemm(at(qa, i0 * W + c, W), false, at(ka, lo * W + c, W), true, P, rows, headDim, cols, false, (_, s, ld) => {
          e.fns.softmaxMasked(s, ld, ma + i0 * T + lo, T, rows, cols, scale);
        });
        e.gemm(P, false, at(va, lo * W + c, W), false, at(oa, i0 * W + c, W), rows, cols, headDim, false);
      });
    }
    out.set(e.f32.subarray(oa >> 2, (oa >> 2) + T * W));
    probs.set(e.f32.subarray(pa >> 2, (pa >> 2) + heads * T * T));
  } finally {
    e.release(mark);
  }
}

/** Backward with all operands resident in the engine's memory; see {@link ComputeKernels.attentionBackward}. */
export function wasmAttentionBackward(e: WasmGemm, dout: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, probs: Float32Array, dq: Float32Array, dk: Float32Array, dv: Float32Array, T: number, heads: number, headDim: number): void {
  const W = heads * headDim, scale = 1 / Math.sqrt(headDim), mark = e.mark();
  try {
    const da = e.alloc(T * W, dout), qa = e.alloc(T * W, q), ka = e.alloc(T * W, k), va = e.alloc(T * W, v), pa = e.alloc(heads * T * T, probs);
    const grads = e.alloc(3 * T * W), dqa = grads, dka = grads + T * W * 4, dva = grads + 2 * T * W * 4;
    const sa = e.alloc(ROW_BLOCK * T), ra = e.alloc(2 * T);
    e.f32.fill(0, grads >> 2, (grads >> 2) + 3 * T * W);
    const at = (addr: number, offset: number, ld: number): Operand => ({ addr, offset, ld });
    for (let h = 0, c = 0; h < heads; h++, c += headDim) {
      const base = h * T * T;
      // Zero probabilities (masked, or underflowed) contribute nothing: skip them.
      e.fns.rowRanges(pa + base * 4, T * 4, T, T, ra);
      const ranges = new Int32Array(e.f32.buffer, ra, 2 * T).slice();
      forEachBlock(T, ranges, (i0, rows, lo, cols) => {
        if (cols === 0) return;
        const P = at(pa, base + i0 * T + lo, T), S = at(sa, 0, cols), dO = at(da, i0 * W + c, W);
        e.gemm(P, true, dO, false, at(dva, lo * W + c, W), cols, rows, headDim, true);
        // dS = P∘(dP − rowsum(P∘dP))/√d with dP = dout·Vᵀ, computed before dP leaves wasm.
        e.gemm(dO, false, at(va, lo * W + c, W), true, S, rows, headDim, cols, false, (_, dp, ld, free) => {
          const ldf = ld >> 2;
          e.reserve(free + rows * ld);
          for (let r = 0, o = free >> 2; r < rows; r++, o += ldf) {
            const src = (pa >> 2) + base + (i0 + r) * T + lo;
            e.f32.copyWithin(o, src, src + cols);
            e.f32.fill(0, o + cols, o + ldf);
          }
          e.fns.softmaxBackward(dp, ld, free, ld, rows, ldf, scale);
        });
        e.gemm(S, false, at(ka, lo * W + c, W), false, at(dqa, i0 * W + c, W), rows, cols, headDim, false);
        e.gemm(S, true, at(qa, i0 * W + c, W), false, at(dka, lo * W + c, W), cols, rows, headDim, true);
      });
    }
    dq.set(e.f32.subarray(dqa >> 2, (dqa >> 2) + T * W));
    dk.set(e.f32.subarray(dka >> 2, (dka >> 2) + T * W));
    dv.set(e.f32.subarray(dva >> 2, (dva >> 2) + T * W));
  } finally {
    e.release(mark);
  }
}

/** Forward on any gemm, softmax in JS (the path without WebAssembly). */
export function jsAttention(gemm: Gemm, scratch: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, allowed: Uint8Array, out: Float32Array, probs: Float32Array, T: number, heads: number, headDim: number): void {
  const W = heads * headDim, scale = 1 / Math.sqrt(headDim), ranges = maskRanges(T, allowed), s = scratch;
  out.fill(0);
  for (let h = 0, c = 0; h < heads; h++, c += headDim) {
    const base = h * T * T;
    forEachBlock(T, ranges, (i0, rows, lo, cols) => {
      probs.fill(0, base + i0 * T, base + (i0 + rows) * T);
      if (cols === 0) return;
      gemm({ data: q, offset: i0 * W + c, ld: W }, false, { data: k, offset: lo * W + c, ld: W }, true, { data: s, offset: 0, ld: cols }, rows, headDim, cols, false);
      for (let r = 0; r < rows; r++) {
        const i = i0 + r, first = ranges[2 * i]!, end = ranges[2 * i + 1]!, mrow = i * T, srow = r * cols - lo, prow = base + i * T;
        let max = -Infinity;
        for (let j = first; j < end; j++) if (allowed[mrow + j] && s[srow + j]! > max) max = s[srow + j]!;
        max *= scale;
        let sum = 0;
        for (let j = first; j < end; j++) {
          const x = allowed[mrow + j] ? expNonPositive(s[srow + j]! * scale - max) : 0;
          s[srow + j] = x;
          sum += x;
        }
        for (let j = first; j < end; j++) probs[prow + j] = s[srow + j]! / sum;
      }
      gemm({ data: probs, offset: base + i0 * T + lo, ld: T }, false, { data: v, offset: lo * W + c, ld: W }, false, { data: out, offset: i0 * W + c, ld: W }, rows, cols, headDim, false);
    });
  }
}

/** Backward on any gemm, softmax backward in JS (the path without WebAssembly). */
export function jsAttentionBackward(gemm: Gemm, scratch: Float32Array, dout: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, probs: Float32Array, dq: Float32Array, dk: Float32Array, dv: Float32Array, T: number, heads: number, headDim: number): void {
  const W = heads * headDim, scale = 1 / Math.sqrt(headDim), ds = scratch;
  dq.fill(0); dk.fill(0); dv.fill(0);
  for (let h = 0, c = 0; h < heads; h++, c += headDim) {
    const base = h * T * T, ranges = new Int32Array(2 * T);
    for (let i = 0; i < T; i++) {
      let a = 0, b = T;
      while (a < T && probs[base + i * T + a] === 0) a++;
      while (b > a && probs[base + i * T + b - 1] === 0) b--;
      if (b > a) { ranges[2 * i] = a; ranges[2 * i + 1] = b; }
    }
    const at = (data: Float32Array, row: number): JsOperand => ({ data, offset: row * W + c, ld: W });
    forEachBlock(T, ranges, (i0, rows, lo, cols) => {
      if (cols === 0) return;
      const P: JsOperand = { data: probs, offset: base + i0 * T + lo, ld: T }, S: JsOperand = { data: ds, offset: 0, ld: cols };
      gemm(P, true, at(dout, i0), false, at(dv, lo), cols, rows, headDim, true);
      gemm(at(dout, i0), false, at(v, lo), true, S, rows, headDim, cols, false);
      for (let r = 0; r < rows; r++) {
        const prow = P.offset + r * T, srow = r * cols;
        let dot = 0;
        for (let j = 0; j < cols; j++) dot += probs[prow + j]! * ds[srow + j]!;
        for (let j = 0; j < cols; j++) ds[srow + j] = probs[prow + j]! * (ds[srow + j]! - dot) * scale;
      }
      gemm(S, false, at(k, lo), false, at(dq, i0), rows, cols, headDim, false);
      gemm(S, true, at(q, i0), false, at(dk, lo), cols, rows, headDim, true);
    });
  }
}
