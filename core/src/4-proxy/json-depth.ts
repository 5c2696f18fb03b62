import type { CanonicalConversation, CanonicalMessage } from '../contracts/messages';
import { jsonNestingDepth, valueNestingDepth } from '../util/json-depth';
import { isSettled } from '../util/settled';
import { WireError } from './wire/types';

export { jsonNestingDepth, valueNestingDepth };

/** Nesting a request may use; real tool schemas and arguments stay far below it. */
export const MAX_JSON_DEPTH = 128;

/** Refuse (400) JSON text that nests deeper than `limit`, naming where and the limit. */
export function checkJsonDepth(text: string, where: string, limit = MAX_JSON_DEPTH): void {
  const depth = jsonNestingDepth(text);
  if (depth > limit) throw new WireError(400, 'invalid_request', `${where} nests ${depth} levels deep; the limit is ${limit}`);
}

/**
 * Refuse tool-call arguments that nest deeper than the limit: they arrive as JSON inside a
 * string (OpenAI formats), so the body's own check does not see their depth, and templates parse them.
 * A message that is the very object at the same place in `checked` (the session's previous
 * request, whose messages passed) is not read again.
 */
export function checkArgumentsDepth(conversation: CanonicalConversation, checked: readonly CanonicalMessage[] = [], limit = MAX_JSON_DEPTH): void {
  conversation.messages.forEach((m, i) => {
    if (checked[i] === m) return;
    for (const p of m.parts) if (p.type === 'tool_call') checkJsonDepth(p.arguments, `the arguments of tool call "${p.name}" in message ${i}`, limit);
  });
}

/** Tool lists already checked (a run's tool list is one shared object, call after call). */
const checkedTools = new WeakSet<object>();

/**
 * Refuse a conversation handed over as values (the ledger used as a library, not behind the
 * HTTP reader that scanned the text) whose tool schemas or tool-call arguments nest deeper than
 * the limit: every later walk (stable keys, settling, templates) would recurse that deep.
 * Settled messages were checked when they were settled.
 */
export function checkConversationDepth(conversation: CanonicalConversation, limit = MAX_JSON_DEPTH): void {
  const tools = conversation.tools as readonly unknown[] | undefined;
  if (tools && !checkedTools.has(tools)) {
    if (valueNestingDepth(tools, limit) > limit) throw new WireError(400, 'invalid_request', `the tool list nests more than ${limit} levels deep; the limit is ${limit}`);
    if (typeof tools === 'object') checkedTools.add(tools);
  }
  conversation.messages.forEach((m, i) => {
    if (isSettled(m)) return;
    for (const p of m.parts) if (p.type === 'tool_call') checkJsonDepth(p.arguments, `the arguments of tool call "${p.name}" in message ${i}`, limit);
  });
}
