import { defineConfig, type ClawGymConfig } from '@clawgym/core';

/**
 * What the three findings runs share (`examples/claude-code`, `examples/mix-harness`,
 * `examples/agentloop-transfer`): the same model from the same Claude Code cold start, the same
 * tasks, algorithm, steps and evaluation. Only the harnesses trained through differ. Every run
 * evaluates held-out Pass@1 through both agentloop and Claude Code, before and after.
 * Claude Code must be installed first: `bash scripts/install-harnesses.sh claude-code`.
 */
export const claudeCode = { use: 'claude-code', options: { bin: `${__dirname}/../.harnesses/claude-code/node_modules/.bin/claude`, tools: ['Bash', 'Read', 'Write'] } };

/**
 * The model: context 512 holds a vocab-upper rollout through Claude Code (about 460 tokens) once
 * the compact template has dropped its system prompt and system reminders. The cold start
 * (`examples/cold-start-claude-code`) uses this model and this Claude Code slot: its tool list is
 * part of every prompt.
 */
export const model = { dModel: 64, layers: 2, heads: 4, context: 512 };

export function findingsConfig(name: string, harnesses: ClawGymConfig['harnesses'], groupSize = 8) {
  return defineConfig({
    name,
    engine: { use: 'embedded', options: { model, checkpoint: '../checkpoints/cold-start-claude-code', optimizer: { lr: 3e-4 } } },
    trainer: 'embedded',
    sandbox: 'local',
    harnesses,
    tasks: [{ use: 'builtin', options: { families: ['vocab-upper'] } }],
    algorithm: 'grpo',
    run: {
      outDir: '../runs',
      steps: 30, tasksPerStep: 4, groupSize, concurrency: 4,
      evalEvery: 0, evalTasks: 150, evalHarnesses: ['agentloop', claudeCode],
    },
  });
}
