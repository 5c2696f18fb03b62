import type { CallRole, CanonicalConversation } from '@clawgym/core';

/**
 * What a Grok CLI request is for (0.0.34, which says 1.0.1): one agent, no subagents, no
 * compaction, no title; every headless call carries its seven tools. A call without tools is
 * not one of its own: a side call. The rest is the main agent.
 */
export function classifyGrokCall(conversation: CanonicalConversation): CallRole {
  return conversation.tools.length === 0 ? 'side' : 'main';
}
