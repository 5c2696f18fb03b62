import { defineConfig } from '@clawgym/core';

/** The embedded model: small enough to train on a 2-core laptop, as it was cold-started. */
const model = { dModel: 64, layers: 2, heads: 4, context: 384 };

/**
 * The default run (`npx clawgym run`): the embedded small transformer as engine and trainer,
 * starting from the shipped cold-start checkpoint; local sandboxes; the white-box agentloop
 * harness; the built-in `vocab-upper` tasks (held-out word combinations); GRPO.
 * Providers named here are loaded by kind: `algorithm: 'grpo'` loads `@clawgym/algo-grpo`.
 *
 * The checkpoint was made from examples/cold-start.config.ts (this model, both copy-friendly
 * families) with
 *   npx clawgym sft --config examples/cold-start.config.ts --fresh --demos 1000 --steps 3000 --stop-after 1250 --batch 8 --lr 1e-3 --out plugins/engine-embedded/checkpoints/cold-start
 */
export default defineConfig({
  name: 'default',
  engine: { use: 'embedded', options: { model, checkpoint: 'cold-start', optimizer: { lr: 3e-4 } } },
  trainer: 'embedded',
  sandbox: 'local',
  harnesses: ['agentloop'],
  // The family with room: the cold start writes a named word (vocab-write) about 86% of the
  // time but copies a word from a tool result in upper case (vocab-upper) about 18%.
  tasks: [{ use: 'builtin', options: { families: ['vocab-upper'] } }],
  algorithm: 'grpo',
  run: {
    // About 17 minutes on 2 cores: 130 steps of 4 tasks x 8 samples (about 6.5 s each), and
    // held-out Pass@1 on 600 test tasks before the first step and after the last (about 90 s
    // each). `npm run bench:learning` measures this run: 20.3% -> 34.7% in 17.2 minutes.
    steps: 130,
    tasksPerStep: 4,
    groupSize: 8,
    concurrency: 4,
    evalEvery: 0,
    evalTasks: 600,
  },
});
