import { definePlugin, z } from '@clawgym/core';
import { cpuKernels } from './cpu';

export { cpuKernels, type CpuKernelOptions } from './cpu';

/**
 * `@clawgym/kernels-cpu`: provides the `cpu` compute kernels (matmul and attention in
 * WebAssembly SIMD, on both cores), the embedded model's default. The config's default
 * `kernels: 'cpu'` loads this package by name.
 */
export default definePlugin({
  name: 'clawgym:kernels-cpu',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.kernels(cpuKernels());
  },
});
