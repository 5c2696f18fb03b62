import { defineConfig } from '@clawgym/core';

/**
 * PPO (simplified, as in the paper) instead of GRPO: a value head, A_t = R − V(s_t), no
 * discount. Otherwise the default run, from the same cold start, for 200 steps (about an hour on
 * 2 cores): `npx clawgym run --config examples/ppo.config.ts`.
 */
const model = { dModel: 64, layers: 2, heads: 4, context: 384, valueHead: true };

export default defineConfig({
  name: 'ppo',
  engine: { use: 'embedded', options: { model, checkpoint: '../checkpoints/cold-start', optimizer: { lr: 3e-4 } } },
  trainer: 'embedded',
  harnesses: ['agentloop'],
  tasks: [{ use: 'builtin', options: { families: ['vocab-write', 'vocab-upper'] } }],
  algorithm: 'ppo',
  loss: { valueCoef: 0.5 },
  run: { steps: 200, tasksPerStep: 4, groupSize: 8, concurrency: 4, evalEvery: 20, evalTasks: 100, outDir: '../runs' },
});
