import { defineConfig } from '@clawgym/core';

/**
 * The config the shipped cold start (`cold-start`, shipped in `@clawgym/engine-embedded`'s `checkpoints/`) was made from: the default run's
 * model, agentloop, and both copy-friendly families, whose oracle demonstrations `clawgym sft`
 * plays through the harness and the proxy. From the repository's root:
 *
 *   npx clawgym sft --config examples/cold-start.config.ts --fresh --demos 1000 --steps 3000 --stop-after 1250 --batch 8 --lr 1e-3 --out plugins/engine-embedded/checkpoints/cold-start
 *
 * (about 15 minutes on 2 cores). `--fresh` starts from random weights, so the checkpoint named
 * here is only what a run of this config would start from.
 */
const model = { dModel: 64, layers: 2, heads: 4, context: 384 };

export default defineConfig({
  name: 'cold-start',
  engine: { use: 'embedded', options: { model, checkpoint: 'cold-start' } },
  trainer: 'embedded',
  harnesses: ['agentloop'],
  tasks: [{ use: 'builtin', options: { families: ['vocab-write', 'vocab-upper'] } }],
  algorithm: 'grpo',
  run: { outDir: '../runs' },
});
