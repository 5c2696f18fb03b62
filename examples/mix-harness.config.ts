import { claudeCode, findingsConfig } from './findings';

/**
 * Mix-harness: one policy trained through agentloop and Claude Code in the same batch. Each task
 * is rolled out through both, a group of 4 per harness, so a step has the 32 rollouts of a
 * single-harness step: the same budget, split. GRPO normalises inside each Task×Harness pair, so
 * one harness's easier rewards never shift the other's advantages.
 * Finding (2): does it reach about what each single-harness run reaches on its own harness?
 */
export default findingsConfig('mix-harness', ['agentloop', claudeCode], 4);
