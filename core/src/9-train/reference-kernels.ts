/**
 * The conformance reference: straightforward, obviously-correct kernels computing in float64.
 * Every function here is generic over the array type, so the gradient checks run it on
 * Float64Arrays end to end; {@link referenceKernels} is the same code behind the
 * Float32Array {@link ComputeKernels} interface.
 */
import type { ComputeKernels } from '../contracts/kernels';

/** A writable numeric array: Float32Array, Float64Array or number[]. */
export type Vec = { [i: number]: number; readonly length: number };

/** C[m×n] (+)= op(A)·op(B) — see {@link ComputeKernels.matmul}. */
function matmul(a: Vec, b: Vec, c: Vec, m: number, k: number, n: number, options: { transA?: boolean; transB?: boolean; accumulate?: boolean } = {}): void {
  const { transA = false, transB = false, accumulate = false } = options;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum += (transA ? a[p * m + i]! : a[i * k + p]!) * (transB ? b[j * k + p]! : b[p * n + j]!);
      c[i * n + j] = accumulate ? c[i * n + j]! + sum : sum;
    }
  }
}

function softmaxRows(x: Vec, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let max = -Infinity;
    for (let j = 0; j < cols; j++) max = Math.max(max, x[o + j]!);
    const e: number[] = [];
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += e[j] = Math.exp(x[o + j]! - max);
    for (let j = 0; j < cols; j++) x[o + j] = e[j]! / sum;
  }
}

function layerNorm(x: Vec, gamma: Vec, beta: Vec, out: Vec, mean: Vec, rstd: Vec, rows: number, cols: number, eps: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let mu = 0;
    for (let j = 0; j < cols; j++) mu += x[o + j]!;
    mu /= cols;
    let variance = 0;
    for (let j = 0; j < cols; j++) variance += (x[o + j]! - mu) ** 2;
    const rs = 1 / Math.sqrt(variance / cols + eps);
    for (let j = 0; j < cols; j++) out[o + j] = (x[o + j]! - mu) * rs * gamma[j]! + beta[j]!;
    mean[r] = mu;
    rstd[r] = rs;
  }
}

/** dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)) with ĝ = dout·γ and x̂ = (x − mean)·rstd. */
function layerNormBackward(dout: Vec, x: Vec, gamma: Vec, mean: Vec, rstd: Vec, dx: Vec, dgamma: Vec, dbeta: Vec, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols, mu = mean[r]!, rs = rstd[r]!;
    let meanG = 0, meanGX = 0;
    for (let j = 0; j < cols; j++) {
      const xhat = (x[o + j]! - mu) * rs, g = dout[o + j]! * gamma[j]!;
      meanG += g;
      meanGX += g * xhat;
      dgamma[j] = dgamma[j]! + dout[o + j]! * xhat;
      dbeta[j] = dbeta[j]! + dout[o + j]!;
    }
    meanG /= cols;
    meanGX /= cols;
    for (let j = 0; j < cols; j++) {
      const xhat = (x[o + j]! - mu) * rs;
      dx[o + j] = rs * (dout[o + j]! * gamma[j]! - meanG - xhat * meanGX);
    }
  }
}

function attention(q: Vec, k: Vec, v: Vec, allowed: Uint8Array, out: Vec, probs: Vec, T: number, heads: number, headDim: number): void {
  const width = heads * headDim, scale = 1 / Math.sqrt(headDim);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < T; i++) {
      const s: number[] = [];
      let max = -Infinity;
      for (let j = 0; j < T; j++) {
        if (!allowed[i * T + j]) continue;
        let dot = 0;
        for (let d = 0; d < headDim; d++) dot += q[i * width + h * headDim + d]! * k[j * width + h * headDim + d]!;
        s[j] = dot * scale;
        max = Math.max(max, s[j]!);
      }
      let sum = 0;
      for (let j = 0; j < T; j++) if (allowed[i * T + j]) sum += s[j] = Math.exp(s[j]! - max);
      const prow = (h * T + i) * T;
      for (let j = 0; j < T; j++) probs[prow + j] = allowed[i * T + j] ? s[j]! / sum : 0;
      for (let d = 0; d < headDim; d++) {
        let acc = 0;
        for (let j = 0; j < T; j++) acc += probs[prow + j]! * v[j * width + h * headDim + d]!;
        out[i * width + h * headDim + d] = acc;
      }
    }
  }
}

/** dv = Pᵀ·dout; dS = P∘(dP − rowsum(P∘dP)) with dP = dout·Vᵀ; dq = dS·K/√d; dk = dSᵀ·Q/√d. */
function attentionBackward(dout: Vec, q: Vec, k: Vec, v: Vec, probs: Vec, dq: Vec, dk: Vec, dv: Vec, T: number, heads: number, headDim: number): void {
  const width = heads * headDim, scale = 1 / Math.sqrt(headDim);
  for (let i = 0; i < T * width; i++) dq[i] = dk[i] = dv[i] = 0;
  for (let h = 0; h < heads; h++) {
    const col = (t: number, d: number) => t * width + h * headDim + d;
    for (let i = 0; i < T; i++) {
      const prow = (h * T + i) * T;
      const dp: number[] = [];
      let rowDot = 0;
      for (let j = 0; j < T; j++) {
        let dot = 0;
        for (let d = 0; d < headDim; d++) dot += dout[col(i, d)]! * v[col(j, d)]!;
        dp[j] = dot;
        rowDot += probs[prow + j]! * dot;
      }
      for (let j = 0; j < T; j++) {
        const p = probs[prow + j]!;
        const ds = p * (dp[j]! - rowDot) * scale;
        for (let d = 0; d < headDim; d++) {
          dv[col(j, d)] = dv[col(j, d)]! + p * dout[col(i, d)]!;
          dq[col(i, d)] = dq[col(i, d)]! + ds * k[col(j, d)]!;
          dk[col(j, d)] = dk[col(j, d)]! + ds * q[col(i, d)]!;
        }
      }
    }
  }
}

function adamw(param: Vec, grad: Vec, m: Vec, v: Vec, t: number, lr: number, beta1: number, beta2: number, eps: number, weightDecay: number): void {
  const c1 = 1 - beta1 ** t, c2 = 1 - beta2 ** t;
  for (let i = 0; i < param.length; i++) {
    const g = grad[i]!;
    m[i] = beta1 * m[i]! + (1 - beta1) * g;
    v[i] = beta2 * v[i]! + (1 - beta2) * g * g;
    const mhat = m[i]! / c1, vhat = v[i]! / c2;
    param[i] = param[i]! - lr * (mhat / (Math.sqrt(vhat) + eps) + weightDecay * param[i]!);
  }
}

/**
 * The reference operations, generic over the array type (run them on Float64Arrays for
 * float64 end to end). Note for float32 outputs: intermediates (m, v in adamw; probs in
 * attention) round to float32 where they are stored, as in any float32 implementation.
 */
export const referenceOps = { matmul, softmaxRows, layerNorm, layerNormBackward, attention, attentionBackward, adamw };

/** The float64 reference behind the {@link ComputeKernels} interface. Slow; for tests. */
export const referenceKernels: ComputeKernels = { name: 'reference', ...referenceOps };
