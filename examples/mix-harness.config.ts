import { claudeCode, findingsConfig } from './findings';

/**
 * Mix-harness: one policy trained through agentloop and Claude Code in the same batch. Each task
 * is rolled out through both, a group of 8 per harness as in the single-harness runs, so each
 * harness gets the batch a single-harness run gives it (64 rollouts a step in all). GRPO
 * normalises inside each Task×Harness pair, so one harness's easier rewards never shift the
 * other's advantages.
 * Finding (2): does it reach about what each single-harness run reaches on its own harness?
 * (With groups of 4 per harness, the single runs' budget split in two, it did not:
 * docs/results/findings-first/mix-harness-g4.)
 */
export default findingsConfig('mix-harness', ['agentloop', claudeCode]);
