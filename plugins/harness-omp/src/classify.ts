import { lastUserText, systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How the `task` tool's subagents are told what they are (18.2.3): a section the main agent's prompt lacks. */
export const OMP_SUBAGENT_MARKER = 'You are operating on a piece of work assigned to you by the main agent.';

/**
 * How oh-my-pi asks for a handoff document, its compaction for a model without server-side
 * compaction or images (18.2.3): a user message appended to the agent's own request.
 */
export const OMP_HANDOFF_MARKER = '<critical>\nWrite a handoff document for another instance of yourself.';

/**
 * What an oh-my-pi request is for, read from requests recorded from the CLI (18.2.3, a fork of Pi):
 * - `subagent`: the `task` tool's subagents run in the same process on the same model, with the
 *   main agent's system prompt followed by a worker's role and a "Coop" section (above), and a
 *   `yield` tool, their only way to return a result, which the main agent is never offered;
 * - `compaction`: past its threshold (and, speculatively, in the background as the context nears
 *   it) it has the agent write a handoff document: the agent's very request, tools included, with
 *   a last user message asking for it (above). The agent then goes on from "Context replaced. The
 *   <handoff> below …" in place of the history;
 * - a request without tools is a side call.
 * The rest is the main agent (`--no-title`: no session-title call). Only positive signs make a
 * side call, so a changed main prompt never empties the main tree.
 */
export function classifyOmpCall(conversation: CanonicalConversation): CallRole {
  if (lastUserText(conversation).startsWith(OMP_HANDOFF_MARKER)) return 'compaction';
  if (conversation.tools.some((t) => t.name === 'yield') || systemText(conversation).includes(OMP_SUBAGENT_MARKER)) return 'subagent';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
