import { request } from 'node:http';
import { startScriptedProxy } from '../testing';
import { ScriptedEngine, type ScriptContext, type ScriptedTurn } from './engine/scripted';
import type { Engine, GenerateRequest } from '../contracts/engine';

/** Per-session behaviour, chosen by the rollout id's prefix. */
function script({ sessionId }: ScriptContext): ScriptedTurn {
  if (sessionId.startsWith('fail-before')) return { failBefore: 'GPU fell over' };
  if (sessionId.startsWith('fail-mid')) return { text: 'a fairly long answer that breaks', failAfterTokens: 5 };
  if (sessionId.startsWith('hang')) return { hang: true };
  if (sessionId.startsWith('slow')) return { text: 'x'.repeat(200), delayMsPerToken: 10 };
  return { text: 'healthy', toolCalls: [{ name: 'w', arguments: { n: 1 } }] };
}

type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
beforeAll(async () => { p = await startScriptedProxy(script, { firstTokenTimeoutMs: 300, nextTokenTimeoutMs: 300, maxBodyBytes: 64 * 1024, maxConsecutiveFailures: 2 }); });
afterAll(async () => { await p.close(); });

const body = (stream: boolean, extra: Record<string, unknown> = {}) => JSON.stringify({
  model: 'm', max_tokens: 512, stream, messages: [{ role: 'user', content: 'go' }], ...extra,
});

async function post(id: string, payload: string, path = '/v1/messages') {
  const s = p.proxy.sessions.get(id) ? { key: p.proxy.sessions.get(id)!.key } : { key: p.proxy.openSession(id).apiKey };
  const res = await fetch(`${p.url}/s/${id}${path}`, { method: 'POST', headers: { 'x-api-key': s.key, 'content-type': 'application/json', authorization: `Bearer ${s.key}` }, body: payload });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/** A healthy session answered while the faults happen: its records must stay complete. */
async function healthyCalls(id: string, n: number) {
  for (let i = 0; i < n; i++) expect((await post(`${id}`, body(i % 2 === 0))).status).toBe(200);
}

describe('proxy faults', () => {
  it('engine error before the first token: 500 in the wire format (non-streamed), error event (streamed)', async () => {
    const json = await post('fail-before-1', body(false));
    expect(json.status).toBe(500);
    expect(JSON.parse(json.text)).toEqual({ type: 'error', error: { type: 'api_error', message: 'GPU fell over' } });
    const sse = await post('fail-before-2', body(true));
    expect(sse.status).toBe(200); // headers were sent at once
    expect(sse.text).toMatch(/^event: message_start\n/);
    expect(sse.text).toContain('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"GPU fell over"}}');
    expect(sse.text).not.toContain('message_stop');
    const rec = await p.store.read('fail-before-2');
    expect(rec).toHaveLength(1);
    expect(rec[0]!.finishReason).toBe('error');
  });

  it('engine error mid-stream: the tokens so far, then an error, then a clean end (OpenAI chat)', async () => {
    const sse = await post('fail-mid-1', body(true), '/v1/chat/completions');
    const lines = sse.text.trim().split('\n\n');
    expect(lines.filter((l) => l.includes('"content":"')).length).toBeGreaterThan(1);
    expect(lines.at(-2)).toContain('"error":{"message":"scripted failure after 5 tokens","type":"server_error"');
    expect(lines.at(-1)).toBe('data: [DONE]');
    expect((await p.store.read('fail-mid-1'))[0]).toMatchObject({ finishReason: 'error', outputIds: expect.any(Array) });
  });

  it('engine hang: times out with an error instead of waiting forever', async () => {
    const started = Date.now();
    const json = await post('hang-1', body(false), '/v1/responses');
    expect(json.status).toBe(500);
    expect(JSON.parse(json.text).error.message).toMatch(/produced no first token within 300 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('after repeated engine failures a session answers non-retryable 400s and reports an infra failure', async () => {
    await post('fail-before-3', body(false));
    await post('fail-before-3', body(false));
    const third = await post('fail-before-3', body(false));
    expect(third.status).toBe(400);
    expect(third.text).toContain('marked as an infrastructure failure');
    expect(await p.proxy.closeSession('fail-before-3')).toEqual({ calls: 2, infraFailure: 'GPU fell over', refused: expect.stringMatching(/^400: the engine or proxy failed 2 times in a row/) });
  });

  it('client disconnect mid-stream: the engine is stopped, the call recorded as aborted, the server stays up', async () => {
    const s = p.proxy.openSession('slow-1');
    await new Promise<void>((resolve, reject) => {
      const req = request(`${p.url}/s/slow-1/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.apiKey, 'content-type': 'application/json' } }, (res) => {
        res.once('data', () => { req.destroy(); resolve(); });
      });
      req.on('error', () => {});
      req.end(body(true));
      setTimeout(() => reject(new Error('no data')), 2000);
    });
    for (let i = 0; i < 50 && (await p.store.read('slow-1')).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const rec = await p.store.read('slow-1');
    expect(rec[0]!.finishReason).toBe('aborted');
    expect(rec[0]!.outputIds.length).toBeLessThan(200);
    await healthyCalls('after-disconnect', 1);
  });

  it('an engine that reads the abort signal only after the client left gets it aborted, and is stopped', async () => {
    // The proxy makes the AbortSignal when an engine first reads it: one read after the abort
    // must still see it aborted, or a slow engine would generate on for a client that is gone.
    const inner = new ScriptedEngine(() => ({ text: 'x' }));
    const seen: { abortedAtRead?: boolean; tokens: number } = { tokens: 0 };
    const engine: Engine = {
      name: 'late-reader', tokenizer: inner.tokenizer, chatTemplate: inner.chatTemplate, policyVersion: () => 0,
      async *generate(r: GenerateRequest) {
        await new Promise((res) => setTimeout(res, 300));
        const signal = r.signal!;
        seen.abortedAtRead = signal.aborted;
        while (!signal.aborted && seen.tokens < 1000) { seen.tokens++; yield { tokenId: 120, logprob: -1 }; await new Promise((res) => setTimeout(res, 5)); }
      },
    };
    const q = await startScriptedProxy(script, { engine });
    try {
      const s = q.proxy.openSession('late-1');
      await new Promise<void>((resolve) => {
        const req = request(`${q.url}/s/late-1/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' } }, () => {});
        req.on('error', () => resolve());
        req.end(body(false));
        setTimeout(() => { req.destroy(); resolve(); }, 100);
      });
      for (let i = 0; i < 100 && (await q.store.read('late-1')).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(seen.abortedAtRead).toBe(true);
      expect(seen.tokens).toBe(0);
      expect((await q.store.read('late-1'))[0]!.finishReason).toBe('aborted');
    } finally {
      await q.close();
    }
  });

  it('malformed JSON and an oversized body get 400 and 413 in the wire format', async () => {
    const bad = await post('bad-1', '{"model": "m", "messages": [', '/v1/chat/completions');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.message).toMatch(/^request body is not valid JSON/);
    const big = await post('bad-2', body(false, { pad: 'x'.repeat(100 * 1024) }));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text)).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    const wrongShape = await post('bad-3', JSON.stringify({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }), '/v1/chat/completions');
    expect(JSON.parse(wrongShape.text).error.message).toBe('messages[0].role must be one of system, developer, user, assistant, tool');
  });

  it('keeps other sessions\' records intact and complete while faults happen concurrently', async () => {
    await Promise.all([
      healthyCalls('bystander', 6),
      post('fail-before-4', body(true)), post('fail-mid-2', body(true)), post('hang-2', body(true)),
      post('bad-4', '{oops'),
    ]);
    const recs = await p.store.read('bystander');
    expect(recs.map((r) => r.callIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(recs.every((r) => r.rolloutId === 'bystander' && r.finishReason === 'tool_calls' && r.outputIds.length > 10)).toBe(true);
    expect(recs.slice(1).every((r) => r.origin.kind === 'retry')).toBe(true); // identical bodies
  });

  it('records the harness\'s main/side classification of each call', async () => {
    const s = p.proxy.openSession('classified-1', { classify: (conv) => (conv.tools.length ? 'main' : 'side') });
    const send = (tools: unknown[]) => fetch(`${s.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.apiKey }, body: JSON.stringify({ model: 'm', max_tokens: 64, tools, messages: [{ role: 'user', content: 'go' }] }) });
    await send([{ name: 'w', input_schema: { type: 'object' } }]);
    await send([]);
    expect((await p.store.read('classified-1')).map((r) => r.role)).toEqual(['main', 'side']);
  });

  it('keeps its defaults when optional settings are passed as undefined', async () => {
    const q = await startScriptedProxy(() => ({ text: 'still here' }), { maxTokens: undefined, temperature: undefined });
    try {
      const s = q.proxy.openSession('undef-1');
      const r = await fetch(`${s.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.apiKey}` }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }) });
      expect(((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('still here');
    } finally {
      await q.close();
    }
  });
});

describe('proxy failures before generation', () => {
  it('an exception while rendering is a 500 that sets the infra flag and counts toward maxConsecutiveFailures', async () => {
    const q = await startScriptedProxy(() => ({ text: 'fine' }), { maxConsecutiveFailures: 2 });
    try {
      q.engine.chatTemplate.render = () => { throw new RangeError('Maximum call stack size exceeded'); };
      const s = q.proxy.openSession('render-bug');
      const send = () => fetch(`${s.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.apiKey }, body: body(false) }).then((r) => r.status);
      expect([await send(), await send(), await send()]).toEqual([500, 500, 400]);
      expect(await q.proxy.closeSession('render-bug')).toMatchObject({ infraFailure: 'the proxy failed a request: 500: Maximum call stack size exceeded' });
    } finally {
      await q.close();
    }
  });

  it('a request with a wrong key is not charged to the session it names', async () => {
    const s = p.proxy.openSession('victim-1');
    await fetch(`${s.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'someone-else' }, body: '{' });
    expect(await p.proxy.closeSession('victim-1')).toEqual({ calls: 0, infraFailure: undefined });
  });
});

describe('oversized bodies', () => {
  it('a client still sending a body over the limit reads the 413, declared or chunked, on a closing connection', async () => {
    const s = p.proxy.openSession('oversized-1');
    const body = JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024) }] });
    const post = (chunked: boolean) => new Promise<number>((done) => {
      const req = request(`${s.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.apiKey}`, connection: 'close', ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': Buffer.byteLength(body) }) } }, (res) => { res.resume(); res.on('end', () => done(res.statusCode ?? 0)); });
      req.on('error', () => done(0)); // a reset: the client never saw the answer
      if (chunked) { for (let i = 0; i < body.length; i += 256 * 1024) req.write(body.slice(i, i + 256 * 1024)); req.end(); } else req.end(body);
    });
    for (let i = 0; i < 5; i++) expect([await post(false), await post(true)]).toEqual([413, 413]);
  }, 60_000);
});
