import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** Words of the compaction summariser's system prompt (0.215.0), after the agent's own first sentence. */
export const DROID_COMPACTION_MARKER = 'You excel at creating and maintaining summaries';
/** A heading of every `Task` subagent's system prompt (0.215.0: `worker`, `explorer`), after the agent's first sentence. */
export const DROID_SUBAGENT_MARKER = 'Subagent contract:';

/**
 * What a Factory Droid request is for, read from requests recorded from the CLI (0.215.0):
 * - `compaction`: past `compactionTokenLimit` it asks for a summary of the session: a system
 *   prompt of its own that begins like the agent's ("You are Droid, …") and goes on with
 *   {@link DROID_COMPACTION_MARKER}, no tools, the history quoted in one user message; the agent
 *   then goes on from "A previous instance of Droid has summarized the conversation thus far";
 * - `subagent`: the `Task` tool's subagents: a system prompt of their own that begins like the
 *   agent's and holds {@link DROID_SUBAGENT_MARKER}, the agent's tools less `Task`;
 * - any other call without tools is not the agent's: a side call.
 * The rest (every call with its tools) is the main agent. `exec` makes no title call to the model.
 */
export function classifyDroidCall(conversation: CanonicalConversation): CallRole {
  const system = systemText(conversation);
  if (system.includes(DROID_SUBAGENT_MARKER)) return 'subagent';
  if (conversation.tools.length > 0) return 'main';
  return system.includes(DROID_COMPACTION_MARKER) ? 'compaction' : 'side';
}
