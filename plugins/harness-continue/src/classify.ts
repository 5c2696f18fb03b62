import { lastUserText, type CallRole, type CanonicalConversation } from '@clawgym/core';

/** How the summary request Continue appends to the history begins (1.5.47, its auto-compaction). */
export const CONTINUE_COMPACTION_MARKER = 'Please provide a concise summary of our conversation so far';

/**
 * What a Continue request is for, read from requests recorded from the CLI (1.5.47):
 * - `compaction`: when its estimate of the next request passes the context length less the reply's
 *   room and a buffer, it asks for a summary with the main system prompt and tools, as much of the
 *   history as fits and a last user message that begins with {@link CONTINUE_COMPACTION_MARKER};
 *   the agent then goes on with the summary as its only message (an assistant message);
 * - `side`: a call without tools (none of its own; its subagents are a beta option, off here).
 * The rest is the main agent. Only positive signs make a side call.
 */
export function classifyContinueCall(conversation: CanonicalConversation): CallRole {
  // The request ends with it: the last message is the user's (its text is then lastUserText's).
  const endsWithUser = conversation.messages[conversation.messages.length - 1]?.role === 'user';
  if (endsWithUser && lastUserText(conversation).trimStart().startsWith(CONTINUE_COMPACTION_MARKER)) return 'compaction';
  return conversation.tools.length === 0 ? 'side' : 'main';
}
