import type { CallRole, CanonicalConversation } from '@clawgym/core';

/**
 * What an OpenClaw request is for. Every call recorded from the CLI (2026.9.6, fixtures in
 * core/src/4-proxy/__fixtures__/harness-requests) is its agent's, with its tools; a request
 * without tools (a summary or compaction helper) is a side call. Only that positive marker makes
 * a side call, so a changed prompt never empties the main tree.
 */
export function classifyOpenClawCall(conversation: CanonicalConversation): CallRole {
  return conversation.tools.length === 0 ? 'side' : 'main';
}
