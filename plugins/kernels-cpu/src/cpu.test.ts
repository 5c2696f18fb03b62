import { describeKernelConformance } from '@clawgym/core/testing';
import { cpuKernels } from './cpu';
import { gemmModule } from './wasm-gemm';

test('WebAssembly SIMD is available (the fast path is what is tested)', () => {
  expect(gemmModule()).toBeDefined();
});

describeKernelConformance('cpu', () => cpuKernels());
describeKernelConformance('cpu (plain JS, no wasm)', () => cpuKernels({ wasm: false }));
describeKernelConformance('cpu (2 threads)', () => cpuKernels({ threads: 2, minThreadFlops: 1 }));

test('two threads split the work and restart after dispose', async () => {
  const kernels = cpuKernels({ threads: 2, minThreadFlops: 1 }), plain = cpuKernels({ wasm: false });
  const m = 37, k = 29, n = 45, a = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i)), b = Float32Array.from({ length: k * n }, (_, i) => Math.cos(i));
  const want = new Float32Array(m * n), got = new Float32Array(m * n);
  plain.matmul(a, b, want, m, k, n);
  for (let round = 0; round < 2; round++) {
    got.fill(NaN);
    kernels.matmul(a, b, got, m, k, n);
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 4);
    await kernels.dispose!();
  }
});
