import { startScriptedProxy } from '../testing';

// A model's context bounds prompt and output together. A prompt that fills it is refused before
// anything is generated (as the Anthropic API and vLLM do), never read from its tail: the record
// would then claim ids the engine never saw, and the trainer would score a context the sampler
// did not have. The output is capped at the room left and reported as cut.
type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
const CONTEXT = 120;
beforeAll(async () => {
  p = await startScriptedProxy(() => ({ text: 'a reply of forty bytes, give or take one' }));
  p.engine.contextLength = CONTEXT;
});
afterAll(async () => { await p.close(); });

async function post(id: string, path: string, payload: Record<string, unknown>) {
  const key = p.proxy.sessions.get(id)?.key ?? p.proxy.openSession(id).apiKey;
  const res = await fetch(`${p.url}/s/${id}${path}`, {
    method: 'POST', headers: { 'x-api-key': key, authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(payload),
  });
  return { status: res.status, text: await res.text() };
}
const anthropic = (content: string, stream = false) => ({ model: 'm', max_tokens: 512, stream, messages: [{ role: 'user', content }] });
const promptIds = (content: string) => p.engine.chatTemplate.render({ tools: [], messages: [{ role: 'user', parts: [{ type: 'text', text: content }] }] }).length;

describe('the proxy and the model\'s context', () => {
  it('refuses a prompt that fills the context with a 400 "prompt is too long" in each wire format, streamed or not', async () => {
    const long = 'x'.repeat(CONTEXT);
    const n = promptIds(long);
    expect(n).toBeGreaterThanOrEqual(CONTEXT);
    const json = await post('long-1', '/v1/messages', anthropic(long));
    expect(json.status).toBe(400);
    expect(JSON.parse(json.text)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${n} tokens > ${CONTEXT - 1} maximum (the model's context is ${CONTEXT} tokens, output included)` } });
    const sse = await post('long-1', '/v1/messages', anthropic(long, true));
    expect(sse.status).toBe(400); // refused before the stream opens
    expect(sse.text).toContain('prompt is too long');
    const chat = await post('long-2', '/v1/chat/completions', { model: 'm', stream: true, messages: [{ role: 'user', content: long }] });
    expect(chat.status).toBe(400);
    expect(JSON.parse(chat.text).error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/^prompt is too long/) });
  });

  it('records nothing for a refused prompt and does not count it as an engine failure: the next call is call 0 and answered', async () => {
    for (let i = 0; i < 3; i++) expect((await post('long-3', '/v1/messages', anthropic('y'.repeat(CONTEXT)))).status).toBe(400);
    expect(await p.store.read('long-3')).toEqual([]);
    expect((await post('long-3', '/v1/messages', anthropic('short'))).status).toBe(200);
    const [rec] = await p.store.read('long-3');
    expect(rec).toMatchObject({ callIndex: 0, finishReason: 'stop' });
    // Not charged to the session: a conversation that outgrew the context is the policy's doing,
    // so a harness that dies of it is scored (reward 0), not dropped as an infra failure.
    expect(await p.proxy.closeSession('long-3')).toEqual({ calls: 1, infraFailure: undefined, conversation: expect.arrayContaining([expect.objectContaining({ role: 'assistant' })]) });
  });

  it('cuts the output at the room the context leaves, reported as max_tokens / length', async () => {
    const content = 'z'.repeat(CONTEXT - 40);
    const room = CONTEXT - promptIds(content);
    expect(room).toBeGreaterThan(0);
    expect(room).toBeLessThan(30); // the scripted reply is longer than the room
    const json = await post('room-1', '/v1/messages', anthropic(content));
    expect(json.status).toBe(200);
    expect(JSON.parse(json.text)).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: room } });
    const [rec] = await p.store.read('room-1');
    expect(rec!.outputIds).toHaveLength(room);
    expect(rec!.promptIds.length + rec!.outputIds.length).toBe(CONTEXT);
    expect(rec!.finishReason).toBe('length');
  });
});
