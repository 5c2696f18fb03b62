'use strict';
// The bare side's model: a loopback server that answers a CLI's first call with one tool call
// (the oracle's write, in the CLI's own tool) and every later one with "Done.", in each wire
// format the driven CLIs speak: Anthropic Messages, Chat Completions, Responses and Gemini.
// A call that does not offer the tool (a title, a router or another side call) gets "Done.".
const http = require('node:http');

/** The names of the function tools a request offers, in any of the four formats. */
function toolNames(body) {
  const names = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (Array.isArray(t.functionDeclarations)) names.push(...t.functionDeclarations.map((d) => d.name));
    else names.push(t.function ? t.function.name : t.name);
  }
  return names;
}

/** Whether the conversation already holds a tool's result (then the scripted model is done). */
function hasToolResult(body) {
  const blocks = (content) => (Array.isArray(content) ? content : []);
  if ((body.messages ?? []).some((m) => m.role === 'tool' || blocks(m.content).some((b) => b && b.type === 'tool_result'))) return true;
  if (blocks(body.input).some((i) => i && i.type === 'function_call_output')) return true;
  return blocks(body.contents).some((c) => blocks(c.parts).some((p) => p && p.functionResponse));
}

function anthropic(res, model, call) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (type, d) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`);
  ev('message_start', { message: { id: 'msg_b', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } } });
  if (call) {
    ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_b1', name: call.name, input: {} } });
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.arguments) } });
  } else {
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Done.' } });
  }
  ev('content_block_stop', { index: 0 });
  ev('message_delta', { delta: { stop_reason: call ? 'tool_use' : 'end_turn' }, usage: { output_tokens: 5 } });
  ev('message_stop', {});
  res.end();
}

function chat(res, body, call) {
  const message = call ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_b1', type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] } : { role: 'assistant', content: 'Done.' };
  const finish = call ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c_b', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta, finishReason, u) => res.write(`data: ${JSON.stringify({ id: 'c_b', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...(u ? { usage: u } : {}) })}\n\n`);
  chunk(call ? { role: 'assistant', tool_calls: [{ index: 0, ...message.tool_calls[0] }] } : { role: 'assistant', content: 'Done.' }, null);
  chunk({}, finish, usage);
  res.end('data: [DONE]\n\n');
}

/** OpenAI Responses, streamed: the item whole in `output_item.added`/`.done`, then `response.completed`. */
function responses(res, body, call) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (type, d) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...d })}\n\n`);
  const item = call
    ? { type: 'function_call', id: 'fc_b1', call_id: 'call_b1', name: call.name, arguments: JSON.stringify(call.arguments), status: 'completed' }
    : { type: 'message', id: 'msg_b1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] };
  const response = { id: 'resp_b', object: 'response', created_at: 1, model: body.model, status: 'in_progress', output: [] };
  ev('response.created', { response });
  ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } });
  ev('response.output_item.done', { output_index: 0, item });
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  ev('response.completed', { response: { ...response, status: 'completed', output: [item], usage } });
  res.end();
}

/** Gemini `generateContent` (JSON) or `streamGenerateContent?alt=sse` (one SSE chunk). */
function gemini(res, url, call) {
  const part = call ? { functionCall: { name: call.name, args: call.arguments } } : { text: 'Done.' };
  const reply = { candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: 'policy' };
  if (url.includes(':streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify(reply)}\r\n\r\n`);
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply));
  }
}

/** A model server answering a CLI's first offer of `writeCall.name` with `writeCall`, the rest "Done.". */
function scriptedServer(writeCall) {
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', () => {
      let body = {};
      try { body = JSON.parse(text || '{}'); } catch { /* not JSON */ }
      const call = toolNames(body).includes(writeCall.name) && !hasToolResult(body) ? writeCall : undefined;
      const url = req.url ?? '';
      if (req.method !== 'POST') {
        res.writeHead(req.method === 'HEAD' ? 200 : 404, { 'content-type': 'application/json' });
        res.end(req.method === 'HEAD' ? '' : '{}');
      } else if (url.includes('/messages') && !url.includes('count_tokens')) anthropic(res, body.model, call);
      else if (url.includes('/chat/completions')) chat(res, body, call);
      else if (url.includes('/responses')) responses(res, body, call);
      else if (url.includes(':generateContent') || url.includes(':streamGenerateContent')) gemini(res, url, call);
      else if (url.includes(':countTokens')) { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"totalTokens":10}'); }
      else { res.writeHead(404, { 'content-type': 'application/json' }); res.end('{}'); }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

module.exports = { scriptedServer, toolNames, hasToolResult };
