import { definePlugin, z } from '@clawgym/core';
import { gpujsKernels } from './gpujs';

export { gpujsKernels, type GpujsKernels, type GpujsStatus } from './gpujs';

/**
 * `@clawgym/kernels-gpujs`: provides the `gpujs` compute kernels (matmul on gpu.js, the rest
 * from the `cpu` kernels of @clawgym/kernels-cpu). Warns at load when gpu.js is unusable here.
 */
export default definePlugin({
  name: 'clawgym:kernels-gpujs',
  core: '^0.1.0',
  options: z.strictObject({}),
  async apply(api) {
    const kernels = gpujsKernels();
    const status = await kernels.check();
    if (!status.ok) api.log.warn(`kernels "gpujs": ${status.reason}`);
    api.provide.kernels(kernels);
  },
});
