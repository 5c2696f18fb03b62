/**
 * The reference checks itself: its backward passes against central finite differences of its
 * own forward, all in float64; plus a few values known by hand.
 */
import { Rng } from '../util/rng';
import { ancestorMask, causalMask, randomParents, relativeError } from '../testing/kernel-conformance';
import { referenceKernels, referenceOps } from './reference-kernels';

const random = (rng: Rng, n: number) => Float64Array.from({ length: n }, () => rng.next() * 2 - 1);
const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

/** d(loss)/d(x[i]) by central differences, for every i. */
function numericGrad(x: Float64Array, loss: () => number, h = 1e-6): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const keep = x[i]!;
    x[i] = keep + h; const up = loss();
    x[i] = keep - h; const down = loss();
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

describe('reference kernels', () => {
  test('matmul and softmax on values known by hand', () => {
    const c = new Float32Array(4);
    referenceKernels.matmul(new Float32Array([1, 2, 3, 4]), new Float32Array([5, 6, 7, 8]), c, 2, 2, 2);
    expect([...c]).toEqual([19, 22, 43, 50]);
    referenceKernels.matmul(new Float32Array([1, 2, 3, 4]), new Float32Array([5, 6, 7, 8]), c, 2, 2, 2, { transA: true, transB: true, accumulate: true });
    expect([...c]).toEqual([19 + 23, 22 + 31, 43 + 34, 50 + 46]);
    const x = new Float32Array([0, Math.log(3), 1000, 1000]);
    referenceKernels.softmaxRows(x, 2, 2);
    expect([...x]).toEqual([0.25, 0.75, 0.5, 0.5]);
  });

  test('attention over a self-only mask returns v', () => {
    const T = 3, rng = new Rng(1), q = random(rng, T * 4), k = random(rng, T * 4), v = random(rng, T * 4);
    const out = new Float64Array(T * 4), probs = new Float64Array(2 * T * T);
    referenceOps.attention(q, k, v, ancestorMask([-1, -1, -1]), out, probs, T, 2, 2);
    expect(relativeError(out, v)).toBe(0);
  });

  test.each([['causal', 9, 2, 3], ['tree', 12, 3, 2]] as const)('attention backward matches finite differences (%s mask)', (kind, T, heads, headDim) => {
    const rng = new Rng(T), W = heads * headDim;
    const allowed = kind === 'causal' ? causalMask(T) : ancestorMask(randomParents(rng, T));
    const q = random(rng, T * W), k = random(rng, T * W), v = random(rng, T * W), w = random(rng, T * W);
    const out = new Float64Array(T * W), probs = new Float64Array(heads * T * T);
    const loss = () => { referenceOps.attention(q, k, v, allowed, out, probs, T, heads, headDim); return dot(out, w); };
    loss();
    const dq = new Float64Array(T * W), dk = new Float64Array(T * W), dv = new Float64Array(T * W);
    referenceOps.attentionBackward(w, q, k, v, probs, dq, dk, dv, T, heads, headDim);
    expect(relativeError(dq, numericGrad(q, loss))).toBeLessThan(1e-7);
    expect(relativeError(dk, numericGrad(k, loss))).toBeLessThan(1e-7);
    expect(relativeError(dv, numericGrad(v, loss))).toBeLessThan(1e-7);
  });

  test('layerNorm backward matches finite differences', () => {
    const rows = 4, cols = 7, rng = new Rng(3);
    const x = random(rng, rows * cols), gamma = random(rng, cols), beta = random(rng, cols), w = random(rng, rows * cols);
    const out = new Float64Array(rows * cols), mean = new Float64Array(rows), rstd = new Float64Array(rows);
    const loss = () => { referenceOps.layerNorm(x, gamma, beta, out, mean, rstd, rows, cols, 1e-5); return dot(out, w); };
    loss();
    const dx = new Float64Array(rows * cols), dgamma = new Float64Array(cols), dbeta = new Float64Array(cols);
    referenceOps.layerNormBackward(w, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
    expect(relativeError(dx, numericGrad(x, loss))).toBeLessThan(1e-7);
    expect(relativeError(dgamma, numericGrad(gamma, loss))).toBeLessThan(1e-7);
    expect(relativeError(dbeta, numericGrad(beta, loss))).toBeLessThan(1e-7);
  });

  test('adamw first step moves each parameter by about lr against its gradient', () => {
    const p = new Float32Array([1, -1]), m = new Float32Array(2), v = new Float32Array(2);
    referenceKernels.adamw(p, new Float32Array([0.5, -2]), m, v, 1, 0.1, 0.9, 0.999, 1e-8, 0);
    expect(p[0]).toBeCloseTo(0.9, 6);
    expect(p[1]).toBeCloseTo(-0.9, 6);
  });
});
