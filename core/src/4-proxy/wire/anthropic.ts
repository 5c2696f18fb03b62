import type { OutputEvent } from '../../contracts/engine';
import type { CanonicalMessage, MessagePart, ToolSpec } from '../../contracts/messages';
import { settle } from '../../util/settled';
import { Derived, historyOf, isObject, need, optNumber, WireError, type ErrorKind, type ParseMemo, type FinalReply, type ResponseMeta, type SseSink, type WireAdapter } from './types';

const ERROR_TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error', authentication: 'authentication_error', not_found: 'not_found_error',
  gone: 'not_found_error', too_large: 'request_too_large', engine: 'api_error', overloaded: 'overloaded_error',
};

const STOP_REASONS = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens', error: 'end_turn', aborted: 'end_turn' } as const;

/** A tool result's text; a `tool_reference` (what a tool search returns) reads as the tool it loads. */
function textOf(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  need(Array.isArray(content), null, `${where} must be a string or an array of blocks`);
  return (content as unknown[]).map((b) => {
    if (!isObject(b)) return '';
    if (b.type === 'text' && typeof b.text === 'string') return b.text;
    if (b.type === 'image') return '[image]';
    if (b.type === 'tool_reference') return `[tool loaded: ${String(b.tool_name)}]`;
    return '';
  }).join('');
}

/** Names of the tools that `tool_reference` blocks load in one message. */
function referencedIn(message: unknown): readonly string[] {
  const names: string[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) { v.forEach(visit); return; }
    if (!isObject(v)) return;
    if (v.type === 'tool_reference' && typeof v.tool_name === 'string') names.push(v.tool_name);
    if (v.content !== undefined && typeof v.content !== 'string') visit(v.content);
    if (Array.isArray(v.tool_references)) visit(v.tool_references);
  };
  if (isObject(message)) visit(message.content);
  return names;
}

/** Names of the tools that `tool_reference` blocks load anywhere in the conversation. */
function referencedTools(messages: unknown[], memo: ParseMemo | undefined): Set<string> {
  const names = new Set<string>();
  for (const list of historyOf(memo, 'anthropic.references', messages, (m) => references.of(m, () => referencedIn(m)))) for (const n of list) names.add(n);
  return names;
}

/**
 * The tools the policy is offered. A tool marked `defer_loading: true` (Anthropic's tool search)
 * is, as on the hosted API, kept out of the prompt until a `tool_reference` block loads it; then
 * it is offered like the others. Server tools (a `type` other than `custom`, no `input_schema`:
 * web search, code execution, the tool-search tool itself) run on Anthropic's servers, which the
 * proxy cannot do: they are left out, with a note.
 */
function parseTools(raw: unknown, loaded: ReadonlySet<string>): { tools: ToolSpec[]; notes: string[] } {
  if (!Array.isArray(raw)) return { tools: [], notes: [] };
  const deferred: string[] = [];
  const server: string[] = [];
  const tools: ToolSpec[] = [];
  for (const t of raw as unknown[]) {
    if (!isObject(t)) continue;
    const name = String(t.name);
    if (typeof t.type === 'string' && t.type !== 'custom' && !isObject(t.input_schema)) { server.push(`${name} (${t.type})`); continue; }
    if (t.defer_loading === true && !loaded.has(name)) { deferred.push(name); continue; }
    tools.push({ name, description: typeof t.description === 'string' ? t.description : undefined, parameters: isObject(t.input_schema) ? t.input_schema : {} });
  }
  const notes: string[] = [];
  if (deferred.length) notes.push(`deferred tools not rendered until a tool_reference loads them: ${deferred.join(', ')}`);
  if (server.length) notes.push(`server tools refused (the proxy cannot run Anthropic's server tools): ${server.join(', ')}`);
  return { tools, notes };
}

/**
 * What an earlier body of the session held, converted once (see Derived): each message, the
 * system prompt, the tools each message loads, and the tool list (per set of loaded tools).
 */
const references = new Derived<readonly string[]>();
const messageOf = new Derived<CanonicalMessage>();
const systemMessage = new Derived<CanonicalMessage>();
const toolLists = new Derived<Map<string, { tools: ToolSpec[]; notes: string[] }>>();

function offeredTools(raw: unknown, messages: unknown[], memo: ParseMemo | undefined): { tools: ToolSpec[]; notes: string[] } {
  const loaded = referencedTools(messages, memo);
  const byLoaded = toolLists.of(raw, () => new Map());
  const key = [...loaded].sort().join('\n');
  let hit = byLoaded.get(key);
  if (!hit) {
    hit = settle(parseTools(raw, loaded));
    if (byLoaded.size < 64) byLoaded.set(key, hit);
  }
  return hit;
}

/** The JSON schema of `output_config.format` (or the older top-level `output_format`). */
function responseSchema(b: Record<string, unknown>): Record<string, unknown> | undefined {
  const format = isObject(b.output_config) && isObject(b.output_config.format) ? b.output_config.format : isObject(b.output_format) ? b.output_format : undefined;
  if (!format) return undefined;
  need(format.type === 'json_schema' && isObject(format.schema), null, 'output_config.format: only {"type":"json_schema","schema":{...}} is supported');
  return format.schema as Record<string, unknown>;
}

function parseBlocks(content: unknown, where: string): MessagePart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  need(Array.isArray(content), null, `${where}.content must be a string or an array of content blocks`);
  const parts: MessagePart[] = [];
  (content as unknown[]).forEach((b, i) => {
    need(isObject(b) && typeof b.type === 'string', null, `${where}.content[${i}] must be a content block with a type`);
    const block = b as Record<string, unknown>;
    switch (block.type) {
      case 'text': parts.push({ type: 'text', text: need(typeof block.text === 'string', block.text as string, `${where}.content[${i}].text must be a string`) }); break;
      case 'thinking': parts.push({ type: 'thinking', text: String(block.thinking ?? '') }); break;
      case 'redacted_thinking': break;
      case 'image': case 'document': parts.push({ type: 'text', text: `[${block.type}]` }); break;
      case 'tool_use':
        parts.push({ type: 'tool_call', id: String(block.id ?? ''), name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) });
        break;
      case 'tool_result':
        parts.push({ type: 'tool_result', callId: String(block.tool_use_id ?? ''), content: block.content === undefined ? '' : textOf(block.content, `${where}.content[${i}].content`), isError: block.is_error === true });
        break;
      default: parts.push({ type: 'text', text: `[${String(block.type)}]` });
    }
  });
  return parts;
}

/** Anthropic Messages (`POST /v1/messages`), as Claude Code speaks it. */
export const anthropicMessages: WireAdapter = {
  format: 'anthropic-messages',
  historyKey: 'messages',

  parse(body, memo) {
    need(isObject(body), null, 'request body must be a JSON object');
    const b = body as Record<string, unknown>;
    need(Array.isArray(b.messages), null, 'messages: field required (an array)');
    const messages: CanonicalMessage[] = [];
    if (b.system !== undefined) {
      const system = b.system;
      const message = typeof system === 'string' ? { role: 'system' as const, parts: [{ type: 'text' as const, text: system }] }
        : systemMessage.of(system, () => ({ role: 'system', parts: parseBlocks(system, 'system').filter((p) => p.type === 'text') }));
      if (message.parts.length) messages.push(message);
    }
    for (const m of historyOf(memo, 'anthropic.messages', b.messages as unknown[], (m, i) => {
      need(isObject(m) && ['user', 'assistant', 'system'].includes(String((m as { role?: unknown }).role)), null, `messages[${i}].role must be "user", "assistant" or "system"`);
      const msg = m as { role: 'user' | 'assistant' | 'system'; content: unknown };
      return messageOf.of(m, () => ({ role: msg.role, parts: parseBlocks(msg.content, `messages[${i}]`) }));
    })) messages.push(m);
    const offered = offeredTools(b.tools, b.messages as unknown[], memo);
    const tools = offered.tools;
    const notes = [...offered.notes];
    const schema = responseSchema(b);
    // "omitted": the hosted API thinks as usual but returns the block with empty text. The
    // thinking ids are still recorded (and reused by TITO), so nothing is lost for training.
    const omitThinking = isObject(b.thinking) && b.thinking.display === 'omitted';
    if (omitThinking) notes.push('thinking.display "omitted": thinking blocks are returned empty (the generated ids are recorded)');
    return {
      ...(schema ? { responseSchema: schema } : {}),
      ...(omitThinking ? { omitThinking } : {}),
      ...(notes.length ? { notes } : {}),
      conversation: { messages, tools },
      model: need(typeof b.model === 'string', b.model as string, 'model: field required (a string)'),
      stream: b.stream === true,
      maxTokens: need(typeof b.max_tokens === 'number' && b.max_tokens > 0, b.max_tokens as number, 'max_tokens: field required (a positive integer)'),
      temperature: optNumber(b.temperature, 'temperature'),
      topP: optNumber(b.top_p, 'top_p'),
    };
  },

  stream(sink, meta) {
    let index = -1;
    let open: 'text' | 'thinking' | undefined;
    const close = () => {
      if (open === 'thinking') sink.send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: '' } });
      if (open) sink.send('content_block_stop', { type: 'content_block_stop', index });
      open = undefined;
    };
    const openBlock = (block: Record<string, unknown>) => {
      close();
      index++;
      sink.send('content_block_start', { type: 'content_block_start', index, content_block: block });
    };
    return {
      begin() {
        sink.send('message_start', {
          type: 'message_start',
          message: { id: meta.id, type: 'message', role: 'assistant', model: meta.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: meta.promptTokens, output_tokens: 0 } },
        });
        sink.send('ping', { type: 'ping' });
      },
      event(e: OutputEvent) {
        if (e.type === 'tool_call') {
          openBlock({ type: 'tool_use', id: e.call.id, name: e.call.name, input: {} });
          sink.send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: e.call.arguments } });
          sink.send('content_block_stop', { type: 'content_block_stop', index });
          return;
        }
        if (open !== e.type) {
          openBlock(e.type === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' });
          open = e.type;
        }
        if (e.type === 'thinking' && meta.omitThinking) return;
        sink.send('content_block_delta', { type: 'content_block_delta', index, delta: e.type === 'text' ? { type: 'text_delta', text: e.text } : { type: 'thinking_delta', thinking: e.text } });
      },
      end(final: FinalReply) {
        close();
        sink.send('message_delta', { type: 'message_delta', delta: { stop_reason: STOP_REASONS[final.finishReason], stop_sequence: null }, usage: { output_tokens: final.outputTokens } });
        sink.send('message_stop', { type: 'message_stop' });
      },
      fail(message) {
        sink.send('error', anthropicMessages.errorBody('engine', message));
      },
    };
  },

  json(final, meta: ResponseMeta) {
    const content = final.message.parts.flatMap((p): Record<string, unknown>[] => {
      if (p.type === 'text') return p.text ? [{ type: 'text', text: p.text }] : [];
      if (p.type === 'thinking') return [{ type: 'thinking', thinking: meta.omitThinking ? '' : p.text, signature: '' }];
      if (p.type === 'tool_call') return [{ type: 'tool_use', id: p.id, name: p.name, input: JSON.parse(p.arguments) as unknown }];
      return [];
    });
    return {
      id: meta.id, type: 'message', role: 'assistant', model: meta.model, content,
      stop_reason: STOP_REASONS[final.finishReason], stop_sequence: null,
      usage: { input_tokens: final.promptTokens, output_tokens: final.outputTokens },
    };
  },

  errorBody(kind, message) {
    return { type: 'error', error: { type: ERROR_TYPES[kind], message } };
  },
};

/** `POST /v1/messages/count_tokens`: the body is a Messages request without max_tokens. */
export function parseCountTokens(body: unknown) {
  if (!isObject(body)) throw new WireError(400, 'invalid_request', 'request body must be a JSON object');
  return anthropicMessages.parse({ max_tokens: 1, ...body });
}
