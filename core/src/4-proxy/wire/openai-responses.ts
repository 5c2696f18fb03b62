import type { CanonicalMessage, MessagePart, ToolSpec } from '../../contracts/messages';
import { openAiText } from './openai-chat';
import { isObject, need, optNumber, type ErrorKind, type FinalReply, type ResponseMeta, type WireAdapter } from './types';

const ERROR_CODES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error', authentication: 'invalid_api_key', not_found: 'not_found',
  gone: 'not_found', too_large: 'invalid_request_error', engine: 'server_error', overloaded: 'server_error',
};

/**
 * A namespaced tool (Codex's `{"type":"namespace","name":"multi_agent_v1","tools":[...]}`) is
 * offered to the policy as `<namespace>.<tool>`; function names cannot contain a dot, so a dot
 * in a call's name always means a namespace, and the call goes back to the harness as
 * `{"name": tool, "namespace": namespace}` — the shape Codex sends in its history.
 */
const qualified = (namespace: unknown, name: string) => (typeof namespace === 'string' && namespace ? `${namespace}.${name}` : name);
function splitName(name: string): { name: string; namespace?: string } {
  const dot = name.indexOf('.');
  return dot > 0 ? { namespace: name.slice(0, dot), name: name.slice(dot + 1) } : { name };
}
const callItem = (id: string, callId: string, name: string, args: string, status: string) =>
  ({ id, type: 'function_call', status, call_id: callId, ...splitName(name), arguments: args });

const FREEFORM = { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };

function toolSpec(t: Record<string, unknown>, namespace?: string): ToolSpec {
  return {
    name: qualified(namespace, String(t.name)), description: typeof t.description === 'string' ? t.description : undefined,
    parameters: t.type === 'custom' ? FREEFORM : isObject(t.parameters) ? t.parameters : {},
  };
}

/**
 * Function and custom tools as they are; namespaces flattened (see {@link qualified}); hosted
 * tools (`web_search`, `file_search`, `code_interpreter`, ...) run on OpenAI's servers, which the
 * proxy cannot do: they are refused, with a note.
 */
function parseTools(raw: unknown, notes: string[]): ToolSpec[] {
  if (!Array.isArray(raw)) return [];
  const tools: ToolSpec[] = [];
  const refused: string[] = [];
  for (const t of (raw as unknown[]).filter(isObject)) {
    if (t.type === 'function' || t.type === 'custom') tools.push(toolSpec(t));
    else if (t.type === 'namespace' && Array.isArray(t.tools)) {
      const inner = (t.tools as unknown[]).filter(isObject);
      for (const x of inner) {
        if (x.type === 'function' || x.type === 'custom') tools.push(toolSpec(x, String(t.name)));
        else refused.push(`${String(t.name)}.${String(x.name ?? x.type)} (${String(x.type)})`);
      }
      notes.push(`namespace ${String(t.name)} rendered as ${inner.length} tools named ${String(t.name)}.<tool>`);
    } else refused.push(`${String(t.name ?? t.type)} (${String(t.type)})`);
  }
  if (refused.length) notes.push(`hosted tools refused (the proxy cannot run OpenAI's server-side tools): ${refused.join(', ')}`);
  return tools;
}

/** Output items of a finished response (message text, then function calls). */
function outputItems(final: FinalReply, meta: ResponseMeta) {
  const items: Record<string, unknown>[] = [];
  const text = final.message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('');
  if (text) items.push({ id: `msg_${meta.id}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
  for (const p of final.message.parts) {
    if (p.type === 'tool_call') items.push(callItem(`fc_${p.id}`, p.id, p.name, p.arguments, 'completed'));
  }
  return items;
}

function responseObject(meta: ResponseMeta, status: string, output: unknown[], final?: FinalReply) {
  return {
    id: meta.id, object: 'response', created_at: meta.created, status, model: meta.model, output,
    error: null, incomplete_details: final?.finishReason === 'length' ? { reason: 'max_output_tokens' } : null,
    parallel_tool_calls: true, tool_choice: 'auto', tools: [],
    usage: final ? {
      input_tokens: final.promptTokens, input_tokens_details: { cached_tokens: 0 },
      output_tokens: final.outputTokens, output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: final.promptTokens + final.outputTokens,
    } : null,
  };
}

function parseInput(input: unknown): CanonicalMessage[] {
  if (typeof input === 'string') return [{ role: 'user', parts: [{ type: 'text', text: input }] }];
  need(Array.isArray(input), null, 'input must be a string or an array of items');
  const messages: CanonicalMessage[] = [];
  const push = (role: CanonicalMessage['role'], part: MessagePart) => {
    const last = messages[messages.length - 1];
    // Consecutive function calls (and their outputs) form one assistant (or tool) turn.
    if (last && last.role === role && (part.type === 'tool_call' || part.type === 'tool_result')) last.parts.push(part);
    else messages.push({ role, parts: [part] });
  };
  (input as unknown[]).forEach((item, i) => {
    need(isObject(item), null, `input[${i}] must be an object`);
    const it = item as Record<string, unknown>;
    const type = it.type ?? (it.role ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const role = it.role === 'developer' ? 'system' : it.role;
        need(role === 'user' || role === 'assistant' || role === 'system', null, `input[${i}].role must be user, assistant, system or developer`);
        push(role as 'user' | 'assistant' | 'system', { type: 'text', text: openAiText(it.content, `input[${i}].content`) });
        break;
      }
      case 'function_call': case 'custom_tool_call':
        push('assistant', { type: 'tool_call', id: String(it.call_id ?? ''), name: qualified(it.namespace, String(it.name ?? '')), arguments: typeof it.arguments === 'string' ? it.arguments : JSON.stringify({ input: it.input ?? '' }) });
        break;
      case 'function_call_output': case 'custom_tool_call_output':
        push('tool', { type: 'tool_result', callId: String(it.call_id ?? ''), content: openAiText(it.output, `input[${i}].output`) });
        break;
      case 'reasoning': {
        const summary = Array.isArray(it.summary) ? (it.summary as unknown[]).map((s) => (isObject(s) ? String(s.text ?? '') : '')).join('') : '';
        if (summary) push('assistant', { type: 'thinking', text: summary });
        break;
      }
      default:
        need(false, null, `input[${i}].type "${String(type)}" is not supported`);
    }
  });
  return messages;
}

/** OpenAI Responses (`POST /v1/responses`), as Codex CLI speaks it. */
export const openAiResponses: WireAdapter = {
  format: 'openai-responses',
  historyKey: 'input',

  parse(body) {
    need(isObject(body), null, 'request body must be a JSON object');
    const b = body as Record<string, unknown>;
    need(b.previous_response_id === undefined || b.previous_response_id === null, null, 'previous_response_id is not supported: send the whole conversation in input (store: false)');
    const messages = parseInput(b.input ?? []);
    if (typeof b.instructions === 'string' && b.instructions) messages.unshift({ role: 'system', parts: [{ type: 'text', text: b.instructions }] });
    const notes: string[] = [];
    const tools = parseTools(b.tools, notes);
    const format = isObject(b.text) && isObject(b.text.format) ? b.text.format : undefined;
    const schema = format?.type === 'json_schema' && isObject(format.schema) ? format.schema : undefined;
    return {
      ...(schema ? { responseSchema: schema } : {}),
      ...(notes.length ? { notes } : {}),
      conversation: { messages, tools },
      model: need(typeof b.model === 'string', b.model as string, 'model: required (a string)'),
      stream: b.stream === true,
      maxTokens: optNumber(b.max_output_tokens, 'max_output_tokens'),
      temperature: optNumber(b.temperature, 'temperature'),
      topP: optNumber(b.top_p, 'top_p'),
    };
  },

  stream(sink, meta) {
    let seq = 0;
    let outputIndex = -1;
    let text: { id: string; text: string } | undefined;
    const items: unknown[] = [];
    const send = (type: string, data: Record<string, unknown>) => sink.send(type, { type, sequence_number: seq++, ...data });
    const closeText = () => {
      if (!text) return;
      const part = { type: 'output_text', text: text.text, annotations: [] };
      send('response.output_text.done', { item_id: text.id, output_index: outputIndex, content_index: 0, text: text.text });
      send('response.content_part.done', { item_id: text.id, output_index: outputIndex, content_index: 0, part });
      const item = { id: text.id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
      items.push(item);
      send('response.output_item.done', { output_index: outputIndex, item });
      text = undefined;
    };
    return {
      begin() {
        send('response.created', { response: responseObject(meta, 'in_progress', []) });
        send('response.in_progress', { response: responseObject(meta, 'in_progress', []) });
      },
      event(e) {
        if (e.type === 'thinking') return; // reasoning is not streamed in this format
        if (e.type === 'text') {
          if (!text) {
            text = { id: `msg_${meta.id}_${outputIndex + 1}`, text: '' };
            outputIndex++;
            send('response.output_item.added', { output_index: outputIndex, item: { id: text.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
            send('response.content_part.added', { item_id: text.id, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
          }
          text.text += e.text;
          send('response.output_text.delta', { item_id: text.id, output_index: outputIndex, content_index: 0, delta: e.text });
          return;
        }
        closeText();
        outputIndex++;
        const id = `fc_${e.call.id}`;
        send('response.output_item.added', { output_index: outputIndex, item: callItem(id, e.call.id, e.call.name, '', 'in_progress') });
        send('response.function_call_arguments.delta', { item_id: id, output_index: outputIndex, delta: e.call.arguments });
        send('response.function_call_arguments.done', { item_id: id, output_index: outputIndex, arguments: e.call.arguments });
        const item = callItem(id, e.call.id, e.call.name, e.call.arguments, 'completed');
        items.push(item);
        send('response.output_item.done', { output_index: outputIndex, item });
      },
      end(final) {
        closeText();
        const status = final.finishReason === 'length' ? 'incomplete' : 'completed';
        send(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: responseObject(meta, status, items, final) });
      },
      fail(message) {
        send('response.failed', { response: { ...responseObject(meta, 'failed', items), error: { code: 'server_error', message } } });
      },
    };
  },

  json(final, meta) {
    return responseObject(meta, final.finishReason === 'length' ? 'incomplete' : 'completed', outputItems(final, meta), final);
  },

  errorBody(kind, message) {
    // OpenAI types every client mistake (bad key, unknown route, oversized body) as
    // invalid_request_error and tells them apart by `code`; only its own failures are server_error.
    const serverSide = kind === 'engine' || kind === 'overloaded';
    return { error: { message, type: serverSide ? 'server_error' : 'invalid_request_error', param: null, code: ERROR_CODES[kind] } };
  },
};
