/**
 * Conformance tests every {@link ComputeKernels} implementation runs: each kernel against the
 * float64 {@link referenceKernels} on seeded random inputs, max relative error ≤ 1e-4 where
 * the relative error of an output is max|got − want| / max|want| (float32 outputs; an
 * elementwise ratio would blow up on the near-zero entries cancellation produces).
 * Call {@link describeKernelConformance} from a jest test file.
 */
import type { ComputeKernels } from '../contracts/kernels';
import { Rng } from '../util/rng';
import { referenceKernels } from '../9-train/reference-kernels';

/** Max relative error allowed, per output. */
export const CONFORMANCE_TOLERANCE = 1e-4;

/** max|got − want| / max|want| (NaN anywhere makes it NaN, which fails every bound). */
export function relativeError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let diff = 0, scale = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i]! - want[i]!);
    diff = d > diff || Number.isNaN(d) ? d : diff;
    scale = Math.max(scale, Math.abs(want[i]!));
  }
  return scale > 0 ? diff / scale : diff;
}

/** Uniform random values in [-scale, scale). */
export function randomArray(rng: Rng, n: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.next() * 2 - 1) * scale;
  return out;
}

/** allowed[i·T + j] = j ≤ i. */
export function causalMask(T: number): Uint8Array {
  const mask = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) mask.fill(1, i * T, i * T + i + 1);
  return mask;
}

/** allowed[i·T + j] = j is i or an ancestor of i, for parents[i] < i (−1 for a root). */
export function ancestorMask(parents: readonly number[]): Uint8Array {
  const T = parents.length, mask = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i; j >= 0; j = parents[j]!) mask[i * T + j] = 1;
  return mask;
}

/** A random forest over T tokens in packing order: each token's parent precedes it. */
export function randomParents(rng: Rng, T: number): number[] {
  return Array.from({ length: T }, (_, i) => (i === 0 || rng.next() < 0.1 ? -1 : rng.int(Math.max(0, i - 8), i - 1)));
}

function expectClose(what: string, got: ArrayLike<number>, want: ArrayLike<number>): void {
  const err = relativeError(got, want);
  if (!(err <= CONFORMANCE_TOLERANCE)) throw new Error(`${what}: relative error ${err} > ${CONFORMANCE_TOLERANCE}`);
}

const MATMUL_SHAPES: Array<[number, number, number]> = [[1, 1, 1], [7, 13, 5], [64, 64, 64], [130, 70, 257], [1, 300, 3], [33, 2, 65], [96, 128, 40]];
const ATTENTION_SHAPES: Array<[T: number, heads: number, headDim: number]> = [[1, 1, 4], [5, 2, 3], [17, 3, 8], [33, 4, 7], [64, 1, 32], [64, 4, 16]];

/** Defines jest tests checking `make()`'s kernels against the reference (disposed afterwards). */
export function describeKernelConformance(name: string, make: () => ComputeKernels): void {
  describe(`${name} kernels conform to the float64 reference`, () => {
    let kernels: ComputeKernels;
    const ref = referenceKernels;
    beforeAll(() => { kernels = make(); });
    afterAll(async () => { await kernels?.dispose?.(); });

    test('has a name', () => {
      expect(typeof kernels.name).toBe('string');
      expect(kernels.name.length).toBeGreaterThan(0);
    });

    describe.each(MATMUL_SHAPES)('matmul %i×%i×%i', (m, k, n) => {
      const combos = [false, true].flatMap((transA) => [false, true].flatMap((transB) => [false, true].map((accumulate) => ({ transA, transB, accumulate }))));
      test.each(combos)('transA=$transA transB=$transB accumulate=$accumulate', (opts) => {
        const rng = new Rng(m * 131 + k * 17 + n + (opts.transA ? 1000 : 0) + (opts.transB ? 2000 : 0));
        const a = randomArray(rng, m * k), b = randomArray(rng, k * n), c0 = randomArray(rng, m * n);
        const want = c0.slice(), got = c0.slice();
        ref.matmul(a, b, want, m, k, n, opts);
        kernels.matmul(a, b, got, m, k, n, opts);
        expectClose('C', got, want);
      });
    });

    test('matmul without options overwrites C', () => {
      const rng = new Rng(5);
      const a = randomArray(rng, 12 * 20), b = randomArray(rng, 20 * 9), want = new Float32Array(12 * 9), got = randomArray(rng, 12 * 9, 100);
      ref.matmul(a, b, want, 12, 20, 9);
      kernels.matmul(a, b, got, 12, 20, 9);
      expectClose('C', got, want);
    });

    test.each([[1, 1], [3, 7], [64, 257], [130, 64]])('softmaxRows %i×%i', (rows, cols) => {
      const rng = new Rng(rows * 1000 + cols);
      const x = randomArray(rng, rows * cols, 30), want = x.slice(), got = x.slice();
      ref.softmaxRows(want, rows, cols);
      kernels.softmaxRows(got, rows, cols);
      expectClose('softmax', got, want);
    });

    test.each([[1, 8], [7, 13], [64, 128], [3, 257]])('layerNorm and backward %i×%i', (rows, cols) => {
      const rng = new Rng(rows * 7 + cols);
      const x = randomArray(rng, rows * cols, 3), gamma = randomArray(rng, cols), beta = randomArray(rng, cols), dout = randomArray(rng, rows * cols);
      for (let i = 0; i < x.length; i++) x[i] += (i % cols) * 0.01 + 2; // a non-zero mean
      const run = (kern: ComputeKernels) => {
        const out = new Float32Array(rows * cols), mean = new Float32Array(rows), rstd = new Float32Array(rows);
        kern.layerNorm(x, gamma, beta, out, mean, rstd, rows, cols, 1e-5);
        const dx = new Float32Array(rows * cols), dgamma = new Float32Array(cols).fill(0.5), dbeta = new Float32Array(cols).fill(-0.25);
        kern.layerNormBackward(dout, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, cols);
        return { out, mean, rstd, dx, dgamma, dbeta };
      };
      const want = run(ref), got = run(kernels);
      for (const key of Object.keys(want) as Array<keyof typeof want>) expectClose(key, got[key], want[key]);
    });

    describe.each(ATTENTION_SHAPES)('attention T=%i heads=%i headDim=%i', (T, heads, headDim) => {
      test.each(['causal', 'tree'])('%s mask: forward and backward', (maskKind) => {
        const rng = new Rng(T * 100 + heads * 10 + headDim + (maskKind === 'tree' ? 7 : 0));
        const W = heads * headDim;
        const allowed = maskKind === 'causal' ? causalMask(T) : ancestorMask(randomParents(rng, T));
        const q = randomArray(rng, T * W, 2), k = randomArray(rng, T * W, 2), v = randomArray(rng, T * W), dout = randomArray(rng, T * W);
        const forward = (kern: ComputeKernels) => {
          const out = new Float32Array(T * W), probs = new Float32Array(heads * T * T).fill(NaN);
          kern.attention(q, k, v, allowed, out, probs, T, heads, headDim);
          return { out, probs };
        };
        const want = forward(ref), got = forward(kernels);
        expectClose('out', got.out, want.out);
        expectClose('probs', got.probs, want.probs);
        // Backward from the same (reference) probs, into buffers holding garbage: it must overwrite.
        const backward = (kern: ComputeKernels) => {
          const [dq, dk, dv] = [0, 1, 2].map(() => new Float32Array(T * W).fill(9)) as [Float32Array, Float32Array, Float32Array];
          kern.attentionBackward(dout, q, k, v, want.probs, dq, dk, dv, T, heads, headDim);
          return { dq, dk, dv };
        };
        const gradsWant = backward(ref), gradsGot = backward(kernels);
        for (const key of ['dq', 'dk', 'dv'] as const) expectClose(key, gradsGot[key], gradsWant[key]);
      });
    });

    test('adamw, several steps', () => {
      const rng = new Rng(42), n = 1000;
      const param = randomArray(rng, n), state = () => ({ p: param.slice(), m: new Float32Array(n), v: new Float32Array(n) });
      const want = state(), got = state();
      for (let t = 1; t <= 6; t++) {
        const grad = randomArray(rng, n, t % 2 ? 1 : 1e-3);
        ref.adamw(want.p, grad, want.m, want.v, t, 1e-2, 0.9, 0.999, 1e-8, 0.01);
        kernels.adamw(got.p, grad, got.m, got.v, t, 1e-2, 0.9, 0.999, 1e-8, 0.01);
      }
      expectClose('param', got.p, want.p);
      expectClose('m', got.m, want.m);
      expectClose('v', got.v, want.v);
    });
  });
}
