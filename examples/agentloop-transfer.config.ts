import { findingsConfig } from './findings';

/**
 * Trained through the white-box agentloop only, measured through Claude Code too. Finding (3):
 * does it transfer to Claude Code less well than a run trained through Claude Code?
 */
export default findingsConfig('agentloop-transfer', ['agentloop']);
