import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How the main agent's system prompt begins (3.0.65). */
export const CLINE_MAIN_MARKER = 'You are Cline, an AI coding agent.';
/** How the agentic compaction's summariser's system prompt begins (3.0.65, `--compaction agentic`). */
export const CLINE_COMPACTION_MARKER = 'Summarize the provided coding session into a concise continuation note';

/**
 * What a Cline request is for, read from requests recorded from the CLI (3.0.65):
 * - `compaction`: when a request would pass 90% of the context window, the agentic compaction
 *   asks for a summary: its own system prompt, no tools, the history quoted in one user message;
 *   the agent then goes on from "Context summary:" and the summary;
 * - `subagent`: the agents the main agent delegates to. A `spawn_agent` subagent and a teammate
 *   (`team_spawn_teammate`, then `team_run_task`) both run under the system prompt the main agent
 *   wrote for them, with the main agent's tools less `team_spawn_teammate` (a subagent has no
 *   `team_*` tool at all, a teammate no `spawn_agent`). Both signs are needed: a prompt that is
 *   not Cline's own, and the core tools without `team_spawn_teammate`.
 * The rest is the main agent. Only positive signs make a side call, so a changed main prompt
 * never empties the main tree.
 */
export function classifyClineCall(conversation: CanonicalConversation): CallRole {
  const system = systemText(conversation).trimStart();
  const tools = new Set(conversation.tools.map((t) => t.name));
  if (tools.size === 0) return system.startsWith(CLINE_COMPACTION_MARKER) ? 'compaction' : 'side';
  if (!system.startsWith(CLINE_MAIN_MARKER) && tools.has('run_commands') && !tools.has('team_spawn_teammate')) return 'subagent';
  return 'main';
}
