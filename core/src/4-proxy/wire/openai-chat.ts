import type { CanonicalMessage, MessagePart, ToolSpec } from '../../contracts/messages';
import { settle } from '../../util/settled';
import { Derived, historyOf, isObject, need, optNumber, type ErrorKind, type WireAdapter } from './types';

const ERROR_TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error', authentication: 'invalid_api_key', not_found: 'not_found_error',
  gone: 'not_found_error', too_large: 'invalid_request_error', engine: 'server_error', overloaded: 'server_error',
};

const FINISH = { stop: 'stop', tool_calls: 'tool_calls', length: 'length', error: 'stop', aborted: 'stop' } as const;

/**
 * Text of OpenAI content: a string, null, or an array of parts joined by `separator` (Chat
 * joins text parts with "\n", as vLLM's server does before templating).
 */
export function openAiText(content: unknown, where: string, separator = ''): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  need(Array.isArray(content), null, `${where} must be a string or an array of content parts`);
  return (content as unknown[]).map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : isObject(p) && String(p.type).includes('image') ? '[image]' : '')).join(separator);
}

/** One Chat message in canonical form. */
function chatMessage(m: unknown, i: number): CanonicalMessage {
  need(isObject(m), null, `messages[${i}] must be an object`);
  const msg = m as Record<string, unknown>;
  const text = openAiText(msg.content, `messages[${i}].content`, '\n');
  switch (msg.role) {
    case 'system': case 'developer':
      return { role: 'system', parts: [{ type: 'text', text }] };
    case 'user':
      return { role: 'user', parts: [{ type: 'text', text }] };
    case 'assistant': {
      const parts: MessagePart[] = text ? [{ type: 'text', text }] : [];
      if (typeof msg.reasoning_content === 'string' && msg.reasoning_content) parts.unshift({ type: 'thinking', text: msg.reasoning_content });
      for (const [j, c] of (Array.isArray(msg.tool_calls) ? msg.tool_calls : []).entries()) {
        need(isObject(c) && isObject(c.function), null, `messages[${i}].tool_calls[${j}] must have a function`);
        const fn = (c as { function: Record<string, unknown> }).function;
        parts.push({ type: 'tool_call', id: String((c as { id?: unknown }).id ?? ''), name: String(fn.name ?? ''), arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) });
      }
      return { role: 'assistant', parts };
    }
    case 'tool': case 'function':
      return { role: 'tool', parts: [{ type: 'tool_result', callId: String(msg.tool_call_id ?? msg.name ?? ''), content: text }] };
    default:
      return need(false, { role: 'user', parts: [] }, `messages[${i}].role must be one of system, developer, user, assistant, tool`);
  }
}

/** The function tools offered, and the names of those that are not functions (hosted ones cannot be offered: they are named, not dropped). */
function parseTools(raw: unknown): { tools: ToolSpec[]; refused: string[] } {
  if (!Array.isArray(raw)) return { tools: [], refused: [] };
  const tools = (raw as unknown[]).filter((t): t is { function: Record<string, unknown> } => isObject(t) && isObject(t.function)).map(({ function: f }) => ({
    name: String(f.name), description: typeof f.description === 'string' ? f.description : undefined, parameters: isObject(f.parameters) ? f.parameters : {},
    ...(f.parameters === undefined || f.parameters === null ? { parametersAbsent: true as const } : {}),
  }));
  const refused = (raw as unknown[]).filter((t) => !(isObject(t) && isObject(t.function))).map((t) => String(isObject(t) ? t.type ?? t.name : t));
  return { tools, refused };
}

/** Messages and tool lists an earlier body of the session held, converted once. */
const chatMessages = new Derived<CanonicalMessage>();
const chatTools = new Derived<{ tools: ToolSpec[]; refused: string[] }>();

/** OpenAI Chat Completions (`POST /v1/chat/completions`), as OpenClaw and Qwen Code speak it. */
export const openAiChat: WireAdapter = {
  format: 'openai-chat',
  historyKey: 'messages',

  parse(body, memo) {
    need(isObject(body), null, 'request body must be a JSON object');
    const b = body as Record<string, unknown>;
    need(Array.isArray(b.messages), null, "'messages' is a required property (an array)");
    const messages = historyOf(memo, 'chat.messages', b.messages as unknown[], (m, i) => chatMessages.of(m, () => chatMessage(m, i)));
    const { tools, refused } = chatTools.of(b.tools, () => settle(parseTools(b.tools)));
    const format = isObject(b.response_format) && b.response_format.type === 'json_schema' && isObject(b.response_format.json_schema) ? b.response_format.json_schema : undefined;
    const schema = format && isObject(format.schema) ? format.schema : undefined;
    return {
      ...(schema ? { responseSchema: schema } : {}),
      ...(refused.length ? { notes: [`tools that are not functions refused (the proxy cannot run them): ${refused.join(', ')}`] } : {}),
      conversation: { messages, tools },
      model: need(typeof b.model === 'string', b.model as string, "'model' is a required property"),
      stream: b.stream === true,
      maxTokens: optNumber(b.max_completion_tokens ?? b.max_tokens, 'max_tokens'),
      temperature: optNumber(b.temperature, 'temperature'),
      topP: optNumber(b.top_p, 'top_p'),
      includeUsage: isObject(b.stream_options) && b.stream_options.include_usage === true,
    };
  },

  stream(sink, meta) {
    let toolIndex = 0;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    return {
      begin() {
        sink.send(undefined, chunk({ role: 'assistant', content: '' }));
      },
      event(e) {
        if (e.type === 'text') sink.send(undefined, chunk({ content: e.text }));
        else if (e.type === 'thinking') sink.send(undefined, chunk({ reasoning_content: e.text }));
        else {
          const index = toolIndex++;
          sink.send(undefined, chunk({ tool_calls: [{ index, id: e.call.id, type: 'function', function: { name: e.call.name, arguments: '' } }] }));
          sink.send(undefined, chunk({ tool_calls: [{ index, function: { arguments: e.call.arguments } }] }));
        }
      },
      end(final) {
        sink.send(undefined, chunk({}, FINISH[final.finishReason]));
        if (meta.includeUsage) {
          sink.send(undefined, {
            id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [],
            usage: { prompt_tokens: final.promptTokens, completion_tokens: final.outputTokens, total_tokens: final.promptTokens + final.outputTokens },
          });
        }
        sink.sendRaw('[DONE]');
      },
      fail(message) {
        sink.send(undefined, openAiChat.errorBody('engine', message));
        sink.sendRaw('[DONE]');
      },
    };
  },

  json(final, meta) {
    const text = final.message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('');
    const calls = final.message.parts.filter((p) => p.type === 'tool_call');
    const reasoning = final.message.parts.filter((p) => p.type === 'thinking').map((p) => (p as { text: string }).text).join('');
    return {
      id: meta.id, object: 'chat.completion', created: meta.created, model: meta.model,
      choices: [{
        index: 0, logprobs: null, finish_reason: FINISH[final.finishReason],
        message: {
          role: 'assistant', content: text || (calls.length ? null : ''),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: (c as { id: string }).id, type: 'function', function: { name: (c as { name: string }).name, arguments: (c as { arguments: string }).arguments } })) } : {}),
        },
      }],
      usage: { prompt_tokens: final.promptTokens, completion_tokens: final.outputTokens, total_tokens: final.promptTokens + final.outputTokens },
    };
  },

  errorBody(kind, message) {
    return { error: { message, type: ERROR_TYPES[kind], param: null, code: kind === 'authentication' ? 'invalid_api_key' : null } };
  },
};
