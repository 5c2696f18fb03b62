import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/**
 * How OpenClaw's compaction summariser's system prompt begins (2026.9.6,
 * `dist/compaction-*.mjs`, `SUMMARIZATION_SYSTEM_PROMPT`): each chunk summary, the merge of the
 * chunk summaries and the split-turn prefix summary all use it, with no tools.
 */
export const OPENCLAW_COMPACTION_MARKER = 'You are a context summarization assistant.';

/**
 * What an OpenClaw request is for, read from requests recorded from the CLI (2026.9.6, fixtures in
 * core/src/4-proxy/__fixtures__/harness-requests):
 * - `compaction`: when the context nears the model's window (the mid-turn precheck, or a
 *   context-overflow error), OpenClaw summarises the older history in chunks, then merges them;
 *   the agent then goes on from the summary (a rewritten history: a new line started by the
 *   compaction);
 * - `side`: any other request without tools;
 * - the rest is the agent, with its tools. Only positive signs make a side call, so a changed
 *   prompt never empties the main tree.
 */
export function classifyOpenClawCall(conversation: CanonicalConversation): CallRole {
  if (systemText(conversation).trimStart().startsWith(OPENCLAW_COMPACTION_MARKER)) return 'compaction';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
