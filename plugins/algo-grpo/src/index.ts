import { definePlugin, z } from '@clawgym/core';
import { grpoAlgorithm } from './grpo';

export { computeGrpo, grpoAlgorithm, GrpoOptions, groupKey } from './grpo';

/** `@clawgym/algo-grpo`: registers the `grpo` algorithm (the config's `algorithm` slot selects it). */
const grpo = definePlugin({
  name: 'clawgym:algo-grpo',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.algorithm(grpoAlgorithm);
  },
});
export default grpo;
