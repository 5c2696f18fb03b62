import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startScriptedProxy } from '../testing';
import type { ScriptedTurn } from './engine/scripted';

type Proxy = Awaited<ReturnType<typeof startScriptedProxy>>;

/** Script: call 0 writes a file with a tool call, call 1 says done; per session. */
const toolThenText = ({ callIndex }: { callIndex: number }): ScriptedTurn =>
  callIndex === 0
    ? { text: 'Writing it.', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'hi' } }] }
    : { text: 'done' };

const writeTool = {
  name: 'write_file', description: 'Write a file',
  parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
};

let p: Proxy;
beforeAll(async () => { p = await startScriptedProxy(toolThenText); });
afterAll(async () => { await p.close(); });

/** Records of a rollout, with the reuse property every later call must have. */
async function expectReuseChain(rolloutId: string, calls: number) {
  const records = await p.store.read(rolloutId);
  expect(records).toHaveLength(calls);
  expect(records[0]!.origin).toEqual({ kind: 'fork', reason: 'first call of the session' });
  for (let i = 1; i < calls; i++) {
    const prev = records[i - 1]!;
    const prefix = [...prev.promptIds, ...prev.outputIds];
    expect(records[i]!.origin).toEqual({ kind: 'reuse', parentCall: i - 1, reusedTokens: prefix.length });
    expect(Array.from(records[i]!.promptIds.subarray(0, prefix.length))).toEqual(prefix);
  }
  for (const r of records) {
    expect(r.outputLogprobs).toHaveLength(r.outputIds.length);
    expect(r.policyVersion).toBe(0);
    expect(r.timings.finishedAt).toBeGreaterThanOrEqual(r.timings.receivedAt);
  }
  return records;
}

describe('Anthropic Messages with @anthropic-ai/sdk', () => {
  const client = (id: string) => {
    const s = p.proxy.openSession(id);
    return new Anthropic({ baseURL: s.baseUrl, apiKey: s.apiKey, maxRetries: 0 });
  };
  const tools = [{ name: writeTool.name, description: writeTool.description, input_schema: writeTool.parameters as Anthropic.Tool.InputSchema }];

  it('answers non-streamed: tool_use, then text after the tool_result, with reuse', async () => {
    const c = client('anth-json');
    const first = await c.messages.create({ model: 'policy', max_tokens: 512, tools, messages: [{ role: 'user', content: 'write a.txt' }] });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ name: 'write_file', input: { path: 'a.txt', content: 'hi' } });
    expect(first.content[0]).toEqual({ type: 'text', text: 'Writing it.' });
    const second = await c.messages.create({
      model: 'policy', max_tokens: 512, tools,
      messages: [
        { role: 'user', content: 'write a.txt' },
        { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'ok' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(second.stop_reason).toBe('end_turn');
    expect(second.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens);
    await expectReuseChain('anth-json', 2);
  });

  it('streams the full event sequence, with input_json_delta for tool_use', async () => {
    const c = client('anth-stream');
    const stream = await c.messages.create({ model: 'policy', max_tokens: 512, tools, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'write a.txt', cache_control: { type: 'ephemeral' } }] }] });
    const types: string[] = [];
    let json = '';
    for await (const e of stream) {
      types.push(e.type === 'content_block_delta' ? `delta:${e.delta.type}` : e.type);
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') json += e.delta.partial_json;
    }
    expect(types[0]).toBe('message_start');
    expect(types).toContain('delta:text_delta');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(2);
    expect(JSON.parse(json)).toEqual({ path: 'a.txt', content: 'hi' });

    // The SDK's own accumulator sees the same message; the lone text block vs string and the
    // cache_control marker must not break reuse on the next call.
    const s2 = c.messages.stream({
      model: 'policy', max_tokens: 512, tools,
      messages: [
        { role: 'user', content: 'write a.txt' },
        { role: 'assistant', content: [{ type: 'text', text: 'Writing it.' }, { type: 'tool_use', id: 'x', name: 'write_file', input: { content: 'hi', path: 'a.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: [{ type: 'text', text: 'ok' }] }] },
      ],
    });
    const final = await s2.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'done' }]);
    const records = await p.store.read('anth-stream');
    // The tool-use id we invented ('x') differs from the one returned: that is a fork, reported as such.
    expect(records[1]!.origin.kind).toBe('fork');
  });

  it('counts tokens and answers HEAD preflights', async () => {
    const s = p.proxy.openSession('anth-count');
    const c = new Anthropic({ baseURL: s.baseUrl, apiKey: s.apiKey, maxRetries: 0 });
    const counted = await c.messages.countTokens({ model: 'policy', messages: [{ role: 'user', content: 'hello' }] });
    expect(counted.input_tokens).toBeGreaterThan(5);
    for (const path of ['/', '/api/hello']) expect((await fetch(`${s.baseUrl}${path}`, { method: 'HEAD' })).status).toBe(200);
  });

  it('refuses a wrong key (401), an unknown session (404), a closed one (410), a bad body (400)', async () => {
    const s = p.proxy.openSession('anth-errors');
    const msg = { model: 'policy', max_tokens: 8, messages: [{ role: 'user' as const, content: 'hi' }] };
    await expect(new Anthropic({ baseURL: s.baseUrl, apiKey: 'wrong', maxRetries: 0 }).messages.create(msg)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(new Anthropic({ baseURL: `${p.url}/s/nobody`, apiKey: s.apiKey, maxRetries: 0 }).messages.create(msg)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const bad = await fetch(`${s.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.apiKey, 'content-type': 'application/json' }, body: '{"model":' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const missing = await fetch(`${s.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.apiKey }, body: '{"model":"m","max_tokens":5}' });
    expect(await missing.json()).toMatchObject({ error: { message: 'messages: field required (an array)' } });
    await p.proxy.closeSession('anth-errors');
    const gone = await new Anthropic({ baseURL: s.baseUrl, apiKey: s.apiKey, maxRetries: 0 }).messages.create(msg).catch((e: unknown) => e);
    expect((gone as { status: number }).status).toBe(410);
    const nowhere = await fetch(`${p.url}/v2/whatever`, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' } });
    expect(nowhere.status).toBe(404);
    expect(await nowhere.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

describe('OpenAI Chat Completions with openai', () => {
  const client = (id: string) => {
    const s = p.proxy.openSession(id);
    return new OpenAI({ baseURL: `${s.baseUrl}/v1`, apiKey: s.apiKey, maxRetries: 0 });
  };
  const tools = [{ type: 'function' as const, function: writeTool }];

  it('answers non-streamed with tool_calls, then text, with reuse', async () => {
    const c = client('chat-json');
    const first = await c.chat.completions.create({ model: 'policy', tools, messages: [{ role: 'user', content: 'write a.txt' }] });
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.content).toBe('Writing it.');
    const call = msg.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ path: 'a.txt', content: 'hi' });
    const second = await c.chat.completions.create({
      model: 'policy', tools,
      messages: [{ role: 'user', content: 'write a.txt' }, msg, { role: 'tool', tool_call_id: call.id, content: 'ok' }],
    });
    expect(second.choices[0]!.message.content).toBe('done');
    expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
    await expectReuseChain('chat-json', 2);
  });

  it('streams tool_calls deltas and a usage chunk with stream_options.include_usage', async () => {
    const c = client('chat-stream');
    const stream = await c.chat.completions.create({ model: 'policy', tools, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'write a.txt' }] });
    let text = '';
    const calls: { id?: string; name?: string; args: string }[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      text += choice.delta.content ?? '';
      for (const d of choice.delta.tool_calls ?? []) {
        calls[d.index] ??= { args: '' };
        calls[d.index]!.id ??= d.id;
        calls[d.index]!.name ??= d.function?.name;
        calls[d.index]!.args += d.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(text).toBe('Writing it.');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe('write_file');
    expect(JSON.parse(calls[0]!.args)).toEqual({ path: 'a.txt', content: 'hi' });
    expect(finish).toBe('tool_calls');
    expect(usage!.completion_tokens).toBe((await p.store.read('chat-stream'))[0]!.outputIds.length);

    // OpenClaw-style echo: the call id with its non-alphanumerics removed still matches.
    const second = await c.chat.completions.create({
      model: 'policy', tools, stream: true,
      messages: [
        { role: 'user', content: 'write a.txt' },
        { role: 'assistant', content: 'Writing it.', tool_calls: [{ id: calls[0]!.id!.replace(/_/g, ''), type: 'function', function: { name: 'write_file', arguments: calls[0]!.args } }] },
        { role: 'tool', tool_call_id: calls[0]!.id!.replace(/_/g, ''), content: 'ok' },
      ],
    });
    let t2 = '';
    for await (const chunk of second) t2 += chunk.choices[0]?.delta.content ?? '';
    expect(t2).toBe('done');
    await expectReuseChain('chat-stream', 2);
  });

  it('lists models and refuses a wrong key with 401', async () => {
    const s = p.proxy.openSession('chat-errors');
    const models = await new OpenAI({ baseURL: `${s.baseUrl}/v1`, apiKey: s.apiKey }).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['clawgym-policy']);
    const err = await new OpenAI({ baseURL: `${s.baseUrl}/v1`, apiKey: 'nope', maxRetries: 0 }).chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as { error: unknown }).error).toMatchObject({ type: 'invalid_api_key' });
  });
});

describe('OpenAI Responses with openai', () => {
  const client = (id: string) => {
    const s = p.proxy.openSession(id);
    return new OpenAI({ baseURL: `${s.baseUrl}/v1`, apiKey: s.apiKey, maxRetries: 0 });
  };
  const tools = [{ type: 'function' as const, name: writeTool.name, description: writeTool.description, parameters: writeTool.parameters, strict: false }];

  it('streams the Responses event sequence with a function_call item, then continues with reuse', async () => {
    const c = client('resp-stream');
    const stream = await c.responses.create({ model: 'policy', tools, stream: true, instructions: 'You are an agent.', input: [{ role: 'user', content: 'write a.txt' }] });
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.completed') completed = e.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types).toEqual(expect.arrayContaining(['response.output_text.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done']));
    expect(types.at(-1)).toBe('response.completed');
    const fc = completed!.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(JSON.parse(fc.arguments)).toEqual({ path: 'a.txt', content: 'hi' });
    const second = await c.responses.create({
      model: 'policy', tools, instructions: 'You are an agent.',
      input: [
        { role: 'user', content: 'write a.txt' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Writing it.', annotations: [] }], id: 'msg_1', status: 'completed' },
        { type: 'function_call', call_id: fc.call_id, name: fc.name, arguments: fc.arguments },
        { type: 'function_call_output', call_id: fc.call_id, output: 'ok' },
      ],
    });
    expect(second.output_text).toBe('done');
    expect(second.status).toBe('completed');
    await expectReuseChain('resp-stream', 2);
  });

  it('answers errors in its own shape', async () => {
    const s = p.proxy.openSession('resp-errors');
    const r = await fetch(`${s.baseUrl}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${s.apiKey}` }, body: JSON.stringify({ model: 'm', input: [{ type: 'bogus' }] }) });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: { type: 'invalid_request_error', message: 'input[0].type "bogus" is not supported' } });
  });
});
