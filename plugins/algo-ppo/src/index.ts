import { definePlugin, z } from '@clawgym/core';
import { ppoAlgorithm } from './ppo';

export { computePpo, ppoAlgorithm, PpoOptions } from './ppo';

/** `@clawgym/algo-ppo`: registers the `ppo` algorithm (the config's `algorithm` slot selects it). */
const ppo = definePlugin({
  name: 'clawgym:algo-ppo',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.algorithm(ppoAlgorithm);
  },
});
export default ppo;
