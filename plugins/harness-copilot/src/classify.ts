import { lastUserText, systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How a subagent's system prompt begins (1.0.102, the `task` tool's agents). */
export const COPILOT_SUBAGENT_MARKER = 'As a sub-agent, complete your parent\'s task yourself';
/** How the compaction request, appended to the history as a user message, begins (1.0.102). */
export const COPILOT_COMPACTION_MARKER = 'Please create a detailed summary of the conversation so far.';

/**
 * What a GitHub Copilot CLI request is for, read from requests recorded from the CLI (1.0.102):
 * - `subagent`: the `task` tool's agents (`general-purpose`, `explore`, `task`, …): the same tools,
 *   a system prompt that begins with {@link COPILOT_SUBAGENT_MARKER};
 * - `compaction`: near the prompt limit (`maxPromptTokens`) it asks for a summary: the main
 *   history with {@link COPILOT_COMPACTION_MARKER} appended as a user message and
 *   `tool_choice: "none"` (tools still listed); the agent then goes on from "Some of the
 *   conversation history has been summarized to free up context";
 * - any call without tools: a side call.
 * The rest is the main agent. Only positive signs make a side call, so a changed main prompt
 * never empties the main tree.
 */
export function classifyCopilotCall(conversation: CanonicalConversation): CallRole {
  if (systemText(conversation).trimStart().startsWith(COPILOT_SUBAGENT_MARKER)) return 'subagent';
  if (lastUserText(conversation).trimStart().startsWith(COPILOT_COMPACTION_MARKER)) return 'compaction';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
