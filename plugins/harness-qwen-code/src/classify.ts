import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How Qwen Code's managed memory extraction subagent's system prompt begins (0.24.4). */
export const QWEN_MEMORY_AGENT_MARKER = 'You are now acting as the managed memory extraction subagent';

/**
 * What a Qwen Code request is for, read from requests recorded from the CLI (0.24.4, fixtures in
 * core/src/4-proxy/__fixtures__/harness-requests). After a turn that answered the user without a
 * tool call, Qwen Code runs its managed memory extraction subagent on the same session: its own
 * system prompt (above), six file tools, the main conversation's history. That call is `memory`;
 * a request without tools is a side call; the rest is the main agent. Only positive markers make
 * a side call, so a changed main prompt never empties the main tree.
 */
export function classifyQwenCodeCall(conversation: CanonicalConversation): CallRole {
  if (systemText(conversation).trimStart().startsWith(QWEN_MEMORY_AGENT_MARKER)) return 'memory';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
