import { claudeCode, findingsConfig } from './findings';

/**
 * Black-box RL through the real Claude Code CLI, from the Claude Code cold start
 * (`checkpoints/cold-start-claude-code`). Finding (1): does Pass@1 measured through Claude Code
 * improve? Install it first: `bash scripts/install-harnesses.sh claude-code`.
 */
export default findingsConfig('claude-code', [claudeCode]);
