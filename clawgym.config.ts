import { defineConfig } from '@clawgym/core';

/** The embedded model: small enough to train on a 2-core laptop, as it was cold-started. */
const model = { dModel: 64, layers: 2, heads: 4, context: 384 };

/**
 * The default run (`npx clawgym run`): the embedded small transformer as engine and trainer,
 * starting from the shipped cold-start checkpoint; local sandboxes; the white-box agentloop
 * harness; the built-in copy-friendly task families (held-out word combinations); GRPO.
 * Providers named here are loaded by kind: `algorithm: 'grpo'` loads `@clawgym/algo-grpo`.
 *
 * The checkpoint was made from this config with
 *   npx clawgym sft --fresh --demos 1000 --steps 3000 --stop-after 1250 --batch 8 --lr 1e-3 --out checkpoints/cold-start
 */
export default defineConfig({
  name: 'default',
  engine: { use: 'embedded', options: { model, checkpoint: 'checkpoints/cold-start', optimizer: { lr: 3e-4 } } },
  trainer: 'embedded',
  sandbox: 'local',
  harnesses: ['agentloop'],
  tasks: [{ use: 'builtin', options: { families: ['vocab-write', 'vocab-upper'] } }],
  algorithm: 'grpo',
  run: {
    // About 18 minutes on 2 cores: 130 steps of 4 tasks x 8 samples (about 6.5 s each), held-out
    // Pass@1 on 400 test tasks at steps 0, 65 and 130 (about 70 s each). `npm run bench:learning`
    // measures this run.
    steps: 130,
    tasksPerStep: 4,
    groupSize: 8,
    concurrency: 4,
    evalEvery: 65,
    evalTasks: 400,
  },
});
