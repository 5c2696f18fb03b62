import { isSettled, settle, type CanonicalMessage, type ToolSpec } from '@clawgym/core';

/** A tool call as chat templates read it (OpenAI's shape; `arguments` an object, as vLLM passes it). */
export interface TemplateToolCall { id: string; type: 'function'; function: { name: string; arguments: unknown } }

/** One message as chat templates read it. */
export interface TemplateMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  reasoning_content?: string;
  tool_calls?: TemplateToolCall[];
  tool_call_id?: string;
}

/**
 * A tool as templates read it, as vLLM passes it (`ChatCompletionToolsParam.model_dump()`):
 * `{type: 'function', function: {name, description, parameters}}`, a missing description `null`.
 */
export const templateTools = (tools: readonly ToolSpec[]) => tools.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description ?? null, parameters: t.parametersAbsent ? null : t.parameters },
}));

/** Tool-call arguments as vLLM passes them to templates: parsed to an object (empty: `{}`). */
function parsedArguments(args: string): unknown {
  if (!args) return {};
  try { return JSON.parse(args); } catch { return args; }
}

/** The template form of settled messages, converted once (they cannot change). */
const converted = new WeakMap<CanonicalMessage, readonly TemplateMessage[]>();

/**
 * Canonical messages → the messages a chat template renders, as vLLM's OpenAI server builds them
 * (vllm/entrypoints/chat_utils.py: `_parse_chat_message_content` and `_postprocess_messages`):
 * text parts joined with "\n" into one string (no text: ""), tool results as `tool` messages with
 * `tool_call_id`, reasoning as `reasoning_content`, tool-call arguments parsed to objects. A
 * settled message (see util/settled.ts) is converted once, to settled template messages.
 */
export function toTemplateMessages(messages: readonly CanonicalMessage[]): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  for (const m of messages) {
    if (!isSettled(m)) { convert(m, out); continue; }
    let known = converted.get(m);
    if (!known) {
      const own: TemplateMessage[] = [];
      convert(m, own);
      known = settle(own);
      converted.set(m, known);
    }
    for (const t of known) out.push(t);
  }
  return out;
}

function convert(m: CanonicalMessage, out: TemplateMessage[]): void {
  if (m.role === 'assistant') {
    const texts = m.parts.filter((p) => p.type === 'text').map((p) => p.text);
    const thinking = m.parts.filter((p) => p.type === 'thinking').map((p) => p.text);
    const calls = m.parts.filter((p) => p.type === 'tool_call');
    out.push({
      role: 'assistant', content: texts.join('\n'),
      ...(thinking.length ? { reasoning_content: thinking.join('\n') } : {}),
      ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: parsedArguments(c.arguments) } })) } : {}),
    });
    return;
  }
  // Tool results become `tool` messages; text around them a user (or system) message, in order.
  let texts: string[] = [];
  const role = m.role === 'system' ? 'system' : 'user';
  const flush = () => { if (texts.length) out.push({ role, content: texts.join('\n') }); texts = []; };
  let any = false;
  for (const p of m.parts) {
    if (p.type === 'tool_result') { flush(); out.push({ role: 'tool', content: p.content, tool_call_id: p.callId }); any = true; }
    else if (p.type === 'text' || p.type === 'thinking') texts.push(p.text);
  }
  if (texts.length || !any) { if (!texts.length) texts = ['']; flush(); }
}
