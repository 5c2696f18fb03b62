import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How Kilo's session-title agent's system prompt begins (7.7.7, as OpenCode's). */
export const KILO_TITLE_MARKER = 'You are a title generator.';
/**
 * The compaction agent's instructions (7.7.7). Unlike OpenCode's, they do not begin its system
 * prompt: Kilo appends them to the main agent's prompt and sends no tools.
 */
export const KILO_COMPACTION_MARKER = 'You are a context summarization agent.';
/** How the `explore` subagent's system prompt begins (7.7.7). */
export const KILO_EXPLORE_MARKER = 'You are a file search specialist.';

/**
 * What a Kilo Code request is for, read from requests recorded from the CLI (7.7.7, a fork of
 * OpenCode that kept its agents):
 * - `title`: at the start of a session it asks for a title on the small model (own system prompt, no tools);
 * - `compaction`: when the context fills, its compaction agent summarises the session: the main
 *   system prompt with the summariser's instructions appended, no tools, the history quoted in one
 *   user message; the main agent then goes on from the summary;
 * - `subagent`: the `task` tool's subagents. The `general` one has the main agent's system prompt;
 *   Kilo denies subagents `task` and `todowrite`, so it has `bash` but neither of those. The
 *   `explore` one has its own prompt.
 * The rest is the main agent. Only positive signs make a side call, so a changed main prompt
 * never empties the main tree.
 */
export function classifyKiloCall(conversation: CanonicalConversation): CallRole {
  const system = systemText(conversation).trimStart();
  if (system.startsWith(KILO_TITLE_MARKER)) return 'title';
  if (system.startsWith(KILO_EXPLORE_MARKER)) return 'subagent';
  const tools = new Set(conversation.tools.map((t) => t.name));
  if (tools.size === 0) return system.includes(KILO_COMPACTION_MARKER) ? 'compaction' : 'side';
  if (tools.has('bash') && !tools.has('task') && !tools.has('todowrite')) return 'subagent';
  return 'main';
}
