import { ClawGymError, ErrorCodes, type ComputeKernels } from '@clawgym/core';
import { cpuKernels } from '@clawgym/kernels-cpu';

/** The slice of gpu.js 2.24 used here (its own typings are broader than needed). */
interface GpuKernel {
  (a: Float32Array, b: Float32Array): Float32Array[] | Float32Array;
  /** The backend's kernel object (its class names the backend: WebAssemblyKernel, HeadlessGLKernel, CPUKernel…). */
  readonly kernel?: { constructor: { name: string } };
}
interface Gpu {
  createKernel(source: string, settings: object): GpuKernel;
  destroy(): Promise<void> | void;
}
interface GpuJs { GPU: new (settings?: { mode?: string }) => Gpu }

/** Whether gpu.js loads here, and which backend `gpu` mode picked. */
export type GpujsStatus = { ok: true; backend: string } | { ok: false; reason: string };

/**
 * C[y][x] = Σₚ A(y, p)·B(p, x) with A(i, p) = a[i·ai + p·ap] and B(p, j) = b[p·bp + j·bj]: the
 * strides absorb transA/transB. Four partial sums (1.4 vs 1.1 GFLOP/s for one, measured).
 * Given as source text so coverage instrumentation or transpilers cannot change what gpu.js parses.
 */
const MATMUL_SOURCE = `function (a, b) {
  const ai = this.thread.y * this.constants.ai, ap = this.constants.ap;
  const bj = this.thread.x * this.constants.bj, bp = this.constants.bp;
  let s0 = 0; let s1 = 0; let s2 = 0; let s3 = 0;
  for (let p = 0; p < this.constants.k4; p += 4) {
    s0 += a[ai + p * ap] * b[p * bp + bj];
    s1 += a[ai + (p + 1) * ap] * b[(p + 1) * bp + bj];
    s2 += a[ai + (p + 2) * ap] * b[(p + 2) * bp + bj];
    s3 += a[ai + (p + 3) * ap] * b[(p + 3) * bp + bj];
  }
  for (let p = this.constants.k4; p < this.constants.k; p++) s0 += a[ai + p * ap] * b[p * bp + bj];
  return (s0 + s1) + (s2 + s3);
}`;

function loadGpujs(): GpuJs | string {
  try {
    return require('gpu.js') as GpuJs;
  } catch (err) {
    return `gpu.js cannot be loaded (${(err as Error).message.split('\n')[0]}): npm i gpu.js@2.24 next to @clawgym/kernels-gpujs`;
  }
}

/** The `gpujs` kernels, plus a `check` of gpu.js and the backend it runs on. */
export interface GpujsKernels extends ComputeKernels {
  check(): Promise<GpujsStatus>;
  dispose(): Promise<void>;
}

/**
 * The `gpujs` kernels: matmul runs as a gpu.js kernel in its `gpu` mode, which without a
 * display (no WebGL, no headless-gl) picks gpu.js's WebAssembly backend (f32x4 SIMD, one
 * thread: its worker pool needs the asynchronous API and these kernels are synchronous).
 * One compiled kernel per shape and transposition, cached. Every other operation
 * (softmaxRows, layerNorm and its backward, attention and its backward, adamw) delegates to
 * the `cpu` kernels (@clawgym/kernels-cpu) unchanged. Throws on first use when gpu.js cannot be loaded; `check()`
 * says why without throwing.
 */
export function gpujsKernels(): GpujsKernels {
  const cpu = cpuKernels();
  let gpu: Gpu | undefined;
  let failure: string | undefined;
  const kernels = new Map<string, GpuKernel>();
  const context = (): Gpu => {
    if (gpu) return gpu;
    const unavailable = (why: string) => new ClawGymError(ErrorCodes.KERNELS_UNAVAILABLE, why, { hint: 'Use the cpu kernels (engine option kernels: "cpu"), or install gpu.js\'s build dependencies (see plugins/kernels-gpujs).' });
    if (failure) throw unavailable(failure);
    const lib = loadGpujs();
    if (typeof lib === 'string') throw unavailable((failure = lib));
    return (gpu = new lib.GPU({ mode: 'gpu' }));
  };
  const kernelFor = (m: number, k: number, n: number, transA: boolean, transB: boolean): GpuKernel => {
    const key = `${m},${k},${n},${transA},${transB}`;
    let kernel = kernels.get(key);
    if (!kernel) {
      const constants = { k, k4: k - (k % 4), ai: transA ? 1 : k, ap: transA ? m : 1, bp: transB ? 1 : n, bj: transB ? k : 1 };
      kernel = context().createKernel(MATMUL_SOURCE, { output: [n, m], constants, precision: 'single' });
      kernels.set(key, kernel);
    }
    return kernel;
  };

  return {
    ...cpu,
    name: 'gpujs',
    matmul(a, b, c, m, k, n, options = {}) {
      if (m === 0 || n === 0) return;
      if (k === 0) { if (!options.accumulate) c.fill(0, 0, m * n); return; }
      const result = kernelFor(m, k, n, !!options.transA, !!options.transB)(a, b);
      const rows = Array.isArray(result) ? result : [result];
      for (let i = 0; i < m; i++) {
        const row = rows[i]!, o = i * n;
        if (options.accumulate) for (let j = 0; j < n; j++) c[o + j] = c[o + j]! + row[j]!;
        else c.set(row.subarray(0, n), o);
      }
    },
    async check() {
      try {
        const probe = kernelFor(1, 1, 1, false, false);
        const result = probe(new Float32Array([2]), new Float32Array([3]));
        const value = Array.isArray(result) ? result[0]![0] : result[0];
        if (value !== 6) return { ok: false, reason: `gpu.js computed 2·3 = ${value}` };
        return { ok: true, backend: probe.kernel?.constructor.name ?? 'unknown' };
      } catch (err) {
        return { ok: false, reason: (err as Error).message };
      }
    },
    async dispose() {
      kernels.clear();
      await gpu?.destroy();
      gpu = undefined;
      await cpu.dispose?.();
    },
  };
}
