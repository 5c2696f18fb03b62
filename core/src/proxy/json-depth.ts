import type { CanonicalConversation } from '../contracts/messages';
import { WireError } from './wire/types';

/** Nesting a request may use; real tool schemas and arguments stay far below it. */
export const MAX_JSON_DEPTH = 128;

/**
 * How deeply `text` nests `[`/`{`, found by one scan without parsing (brackets inside strings
 * do not count). Checked before anything recursive (JSON.stringify, stableJson, templates) sees
 * the value: a tool schema nested 200k deep would otherwise overflow the stack in any of them.
 */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) { if (++depth > max) max = depth; }
    else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return max;
}

/** Refuse (400) JSON text that nests deeper than `limit`, naming where and the limit. */
export function checkJsonDepth(text: string, where: string, limit = MAX_JSON_DEPTH): void {
  const depth = jsonNestingDepth(text);
  if (depth > limit) throw new WireError(400, 'invalid_request', `${where} nests ${depth} levels deep; the limit is ${limit}`);
}

/**
 * Refuse tool-call arguments that nest deeper than the limit: they arrive as JSON inside a
 * string (OpenAI formats), so the body's own check does not see their depth, and templates parse them.
 */
export function checkArgumentsDepth(conversation: CanonicalConversation, limit = MAX_JSON_DEPTH): void {
  conversation.messages.forEach((m, i) => {
    for (const p of m.parts) if (p.type === 'tool_call') checkJsonDepth(p.arguments, `the arguments of tool call "${p.name}" in message ${i}`, limit);
  });
}
