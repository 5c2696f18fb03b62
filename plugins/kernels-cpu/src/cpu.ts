/**
 * `cpu`: the default compute kernels for the embedded model.
 *
 * Matmul runs in WebAssembly SIMD (the module is assembled at load time, see wasm-gemm.ts):
 * operands are packed into 4-row and 8-column panels, which absorbs transA/transB and pads the
 * edges, and a 4×8 f32x4 micro-kernel keeps the C tile in 8 registers. Products of 1M
 * multiply-adds or more share their row panels with one worker thread over the same memory.
 *
 * Measured on this machine (2 cores of an AMD EPYC, shared with other work, so ranges over
 * runs; Node 20), matmul GFLOP/s, best of batches; `bench/embedded-kernels` gives rows 1, 3, 6, 7:
 *
 *   variant                                          128³    256³   512×128×384  1024³
 *   1 plain JS i-k-j loop (the reference)            1.2     1.25      1.3        1.3
 *   2 JS 4×4 register tile (dropped)                 4.9     4.3       4.3        4.1
 *   3 wasm f32x4, 4×8 tile, 1 thread                 35–39   41–44     41–45      43–46
 *   4 + 2nd thread, halves, worker sleeps in futex   ≈1×     1.2–1.3×  1.2–1.4×   1.8×   (vs 3)
 *   5 + 2nd thread, halves, worker polls 0.5 ms      64      74        78         83
 *   6 + 2nd thread, claimed chunks (kept)            34–45   45–62     52–72      64–81
 *   7 gpu.js 2.24, webasm backend (`gpujs`)          1.5–2   1.7–2.1   1.6–2.2    1.4–1.9
 *
 * Also tried: other tiles (4×12, 6×8, 8×4, 3×4: 17–25, register spills; 2×16 ties 4×8) and
 * unrolling the k loop by 2 or 4 (22–28). Packing and copies cost 5–10 % at 256³; a wasm call
 * ~0.3 µs, so only products under 256 multiply-adds stay in JS. Threads: a worker woken from
 * Atomics.wait needs ~40 µs (row 4), so it polls briefly after each job (row 5); but with
 * fixed halves a worker descheduled by another process stalls the call, up to 10× slower
 * (seen: 3.7 GFLOP/s at 128³). Row 6 lets both threads claim shrinking chunks (the caller only
 * waits for chunks the worker took) and drops to one thread for a second when the worker keeps
 * finishing late: idle 1.3–1.9× over one thread from 1M multiply-adds on (below, ≤ 1×), with
 * another process on the second core 0.7–1.2×.
 *
 * Attention (see attention.ts), T=512, 4 heads of 32, causal, forward / backward in ms: JS
 * 58 / 108; wasm matmuls per head with the softmax in JS 14.5 / 18.6; plus 64-row blocks that
 * skip masked columns and a table-based exp 6.7 / 8.8; plus the softmax and its backward in
 * wasm with every operand resident in wasm memory 5.5 / 6.0 (kept).
 */
import { availableParallelism } from 'node:os';
import type { ComputeKernels } from '@clawgym/core';
import { expNonPositive, jsAttention, jsAttentionBackward, ROW_BLOCK, wasmAttention, wasmAttentionBackward, type Gemm, type JsOperand } from './attention';
import { gemmModule, WasmGemm } from './wasm-gemm';

/** Options of {@link cpuKernels}. */
export interface CpuKernelOptions {
  /** Use the WebAssembly SIMD matmul (default: true where the runtime supports it). */
  wasm?: boolean;
  /** Threads for matmuls, this one included (default: 2 where the machine has 2 cores or more). */
  threads?: number;
  /** Matmuls with fewer (padded) multiply-adds stay on one thread (default 2²⁰; tests lower it). */
  minThreadFlops?: number;
}

/** Products with fewer multiply-adds than this run in plain JS (a wasm call costs ~0.3 µs). */
const SMALL = 256;

/** C (+)= op(A)·op(B) on strided operands, in plain JS (dot products in float64). */
function jsGemm(A: JsOperand, transA: boolean, B: JsOperand, transB: boolean, C: JsOperand, m: number, k: number, n: number, accumulate: boolean): void {
  const a = A.data, b = B.data, c = C.data;
  const ai = transA ? 1 : A.ld, ap = transA ? A.ld : 1, bp = transB ? 1 : B.ld, bj = transB ? B.ld : 1;
  for (let i = 0; i < m; i++) {
    const arow = A.offset + i * ai, crow = C.offset + i * C.ld;
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0, x = arow, y = B.offset + j * bj; p < k; p++, x += ap, y += bp) sum += a[x]! * b[y]!;
      c[crow + j] = accumulate ? c[crow + j]! + sum : sum;
    }
  }
}

/** A Float32Array of at least `n` elements, reused across calls. */
class Scratch {
  private buf = new Float32Array(0);
  get(n: number): Float32Array {
    if (this.buf.length < n) this.buf = new Float32Array(n);
    return this.buf;
  }
}

/**
 * The `cpu` kernels: matmul and attention in WebAssembly SIMD (up to two threads for large
 * products), falling back to plain JS for tiny products or where WebAssembly SIMD is missing;
 * softmaxRows, layerNorm and adamw in plain JS (linear in their size). Call `dispose()` to stop
 * the helper thread early (it is unref'd: it never keeps the process alive). The engine's
 * wasm memory grows to the largest call seen and is not returned.
 */
export function cpuKernels(options: CpuKernelOptions = {}): ComputeKernels {
  const module = options.wasm === false ? undefined : gemmModule();
  const threads = Math.max(1, Math.floor(options.threads ?? Math.min(2, availableParallelism())));
  const engine = module ? new WasmGemm(module, threads, options.minThreadFlops) : undefined;
  const gemm: Gemm = (A, tA, B, tB, C, m, k, n, acc) => {
    if (m === 0 || n === 0) return;
    if (k === 0) {
      if (!acc) for (let i = 0; i < m; i++) C.data.fill(0, C.offset + i * C.ld, C.offset + i * C.ld + n);
      return;
    }
    if (engine && m * n * k >= SMALL) engine.gemm(A, tA, B, tB, C, m, k, n, acc);
    else jsGemm(A, tA, B, tB, C, m, k, n, acc);
  };
  const scores = new Scratch();

  return {
    name: 'cpu',
    matmul(a, b, c, m, k, n, opts = {}) {
      const transA = !!opts.transA, transB = !!opts.transB;
      gemm({ data: a, offset: 0, ld: transA ? m : k }, transA, { data: b, offset: 0, ld: transB ? k : n }, transB,
        { data: c, offset: 0, ld: n }, m, k, n, !!opts.accumulate);
    },

    softmaxRows(x, rows, cols) {
      for (let o = 0; o < rows * cols; o += cols) {
        let max = -Infinity;
        for (let j = o; j < o + cols; j++) if (x[j]! > max) max = x[j]!;
        let sum = 0;
        for (let j = o; j < o + cols; j++) { const e = expNonPositive(x[j]! - max); x[j] = e; sum += e; }
        const inv = 1 / sum;
        for (let j = o; j < o + cols; j++) x[j] = x[j]! * inv;
      }
    },

    layerNorm(x, gamma, beta, out, mean, rstd, rows, cols, eps) {
      for (let r = 0; r < rows; r++) {
        const o = r * cols;
        let sum = 0;
        for (let j = 0; j < cols; j++) sum += x[o + j]!;
        const mu = sum / cols;
        let sq = 0;
        for (let j = 0; j < cols; j++) { const d = x[o + j]! - mu; sq += d * d; }
        const rs = 1 / Math.sqrt(sq / cols + eps);
        for (let j = 0; j < cols; j++) out[o + j] = (x[o + j]! - mu) * rs * gamma[j]! + beta[j]!;
        mean[r] = mu;
        rstd[r] = rs;
      }
    },

    layerNormBackward(dout, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols) {
      for (let r = 0; r < rows; r++) {
        const o = r * cols, mu = mean[r]!, rs = rstd[r]!;
        let sumG = 0, sumGX = 0;
        for (let j = 0; j < cols; j++) {
          const dy = dout[o + j]!, xhat = (x[o + j]! - mu) * rs, g = dy * gamma[j]!;
          sumG += g;
          sumGX += g * xhat;
          dgamma[j] += dy * xhat;
          dbeta[j] += dy;
        }
        const meanG = sumG / cols, meanGX = sumGX / cols;
        for (let j = 0; j < cols; j++) {
          const xhat = (x[o + j]! - mu) * rs;
          dx[o + j] = rs * (dout[o + j]! * gamma[j]! - meanG - xhat * meanGX);
        }
      }
    },

    attention(q, k, v, allowed, out, probs, T, heads, headDim) {
      if (engine) wasmAttention(engine, q, k, v, allowed, out, probs, T, heads, headDim);
      else jsAttention(gemm, scores.get(ROW_BLOCK * T), q, k, v, allowed, out, probs, T, heads, headDim);
    },

    attentionBackward(dout, q, k, v, probs, dq, dk, dv, T, heads, headDim) {
      if (engine) wasmAttentionBackward(engine, dout, q, k, v, probs, dq, dk, dv, T, heads, headDim);
      else jsAttentionBackward(gemm, scores.get(ROW_BLOCK * T), dout, q, k, v, probs, dq, dk, dv, T, heads, headDim);
    },

    adamw(param, grad, m, v, t, lr, beta1, beta2, eps, weightDecay) {
      const c1 = 1 / (1 - beta1 ** t), c2 = 1 / (1 - beta2 ** t), b1 = 1 - beta1, b2 = 1 - beta2;
      for (let i = 0; i < param.length; i++) {
        const g = grad[i]!, mi = beta1 * m[i]! + b1 * g, vi = beta2 * v[i]! + b2 * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] = param[i]! - lr * (mi * c1 / (Math.sqrt(vi * c2) + eps) + weightDecay * param[i]!);
      }
    },

    async dispose() {
      await engine?.dispose();
    },
  };
}
