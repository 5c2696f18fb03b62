import { claudeCode, findingsConfig } from './findings';

/**
 * Mix-harness: one policy trained through agentloop and Claude Code in the same batch (each task
 * is rolled out through both, a group of 8 per harness). GRPO normalises inside each
 * Task×Harness pair, so one harness's easier rewards never shift the other's advantages.
 * Finding (2): does it reach about what each single-harness run reaches on its own harness?
 */
export default findingsConfig('mix-harness', ['agentloop', claudeCode]);
