import { defineConfig } from '@clawgym/core';
import { claudeCode, model } from './findings';

/**
 * The config the shipped Claude Code cold start (`checkpoints/cold-start-claude-code`) was made
 * from: the default cold start (`cold-start`, context 384) grown to context 512 —
 * enough for a `vocab-upper` rollout through Claude Code once the compact template drops its
 * system prompt and system reminders — and fine-tuned on oracle demonstrations of both
 * copy-friendly families played through both agentloop and the real Claude Code CLI. From the
 * repository's root:
 *
 *   bash scripts/install-harnesses.sh claude-code
 *   npx clawgym sft --config examples/cold-start-claude-code.config.ts --demos 600 --steps 3000 --stop-after 250 --batch 8 --lr 1e-3 --out checkpoints/cold-start-claude-code
 *
 * (about 12 minutes to play the 1200 demonstrations, 2 to train). Without `--fresh`, sft starts
 * from the checkpoint named here. Stopped at step 250 it leaves RL room: held-out vocab-upper
 * Pass@1 18% through Claude Code and 54% through agentloop (100 tasks); at step 500 it is 80%
 * and 87% (docs/results.md).
 */
export default defineConfig({
  name: 'cold-start-claude-code',
  engine: { use: 'embedded', options: { model, checkpoint: 'cold-start' } },
  trainer: 'embedded',
  harnesses: ['agentloop', claudeCode],
  tasks: [{ use: 'builtin', options: { families: ['vocab-write', 'vocab-upper'] } }],
  algorithm: 'grpo',
  run: { outDir: '../runs' },
});
