import { lastUserText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How Codex's compaction request (its last user message) begins (0.171.0). */
export const CODEX_COMPACTION_MARKER = 'You are performing a CONTEXT CHECKPOINT COMPACTION';

/**
 * What a Codex request is for, read from requests recorded from the CLI (0.171.0, fixtures in
 * core/src/4-proxy/__fixtures__/harness-requests). Past `model_auto_compact_token_limit`, Codex
 * sends the history with no tools and a compaction instruction as the last user message, then
 * continues the main agent from the summary (a rewritten history: a fork of the main tree, on
 * purpose). The compaction call is `compaction`; other tool-less calls are side calls; the rest
 * is the main agent.
 */
export function classifyCodexCall(conversation: CanonicalConversation): CallRole {
  if (lastUserText(conversation).trimStart().startsWith(CODEX_COMPACTION_MARKER)) return 'compaction';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
