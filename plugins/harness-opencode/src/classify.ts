import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How OpenCode's session-title agent's system prompt begins (1.18.33). */
export const OPENCODE_TITLE_MARKER = 'You are a title generator.';
/** How OpenCode's compaction (session summary) agent's system prompt begins (1.18.33). */
export const OPENCODE_COMPACTION_MARKER = 'You are a context summarization agent.';
/** How the `explore` subagent's system prompt begins (1.18.33). */
export const OPENCODE_EXPLORE_MARKER = 'You are a file search specialist.';

/**
 * What an OpenCode request is for, read from requests recorded from the CLI (1.18.33):
 * - `title`: at the start of a session it asks for a title on the small model (own system prompt, no tools);
 * - `compaction`: when the context fills, its compaction agent summarises the session (own system
 *   prompt, no tools); the main agent then goes on from the summary;
 * - `subagent`: the `task` tool's subagents. The `general` one has the main agent's very system
 *   prompt; what tells it apart is its tool list: OpenCode denies subagents `task` and `todowrite`,
 *   so it has `bash` but neither of those. The `explore` one has its own prompt.
 * The rest is the main agent. Only positive signs make a side call, so a changed main prompt
 * never empties the main tree (a main tool list without `task` would: set the harness's tools
 * with care).
 */
export function classifyOpenCodeCall(conversation: CanonicalConversation): CallRole {
  const system = systemText(conversation).trimStart();
  if (system.startsWith(OPENCODE_TITLE_MARKER)) return 'title';
  if (system.startsWith(OPENCODE_COMPACTION_MARKER)) return 'compaction';
  if (system.startsWith(OPENCODE_EXPLORE_MARKER)) return 'subagent';
  const tools = new Set(conversation.tools.map((t) => t.name));
  if (tools.size === 0) return 'side';
  if (tools.has('bash') && !tools.has('task') && !tools.has('todowrite')) return 'subagent';
  return 'main';
}
