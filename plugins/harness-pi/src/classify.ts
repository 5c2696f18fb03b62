import { systemText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How Pi's compaction (context summary) prompt begins (0.73.1). */
export const PI_COMPACTION_MARKER = 'You are a context summarization assistant.';

/**
 * What a Pi request is for (0.73.1): when the context comes within `reserveTokens` of the
 * window, Pi summarises the older part of the session with its own system prompt (above), no
 * tools: `compaction`. A request without tools is a side call; the rest is the main agent (Pi
 * has no subagents, titles or memory of its own). Only positive markers make a side call, so a
 * changed main prompt never empties the main tree.
 */
export function classifyPiCall(conversation: CanonicalConversation): CallRole {
  if (systemText(conversation).trimStart().startsWith(PI_COMPACTION_MARKER)) return 'compaction';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
