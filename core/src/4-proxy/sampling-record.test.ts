import { startScriptedProxy } from '../testing';

// Each record says how its output was sampled and what its logprobs are, so a trainer can tell
// whether importance weights against them are meaningful (vLLM's default logprobs are raw).
type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
beforeAll(async () => { p = await startScriptedProxy(() => ({ text: 'ok' }), { temperature: 1, topP: 1 }); });
afterAll(async () => { await p.close(); });

async function chat(id: string, extra: Record<string, unknown>) {
  const key = p.proxy.openSession(id).apiKey;
  const res = await fetch(`${p.url}/s/${id}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
  expect(res.status).toBe(200);
  return (await p.store.read(id))[0]!;
}

it('records the temperature and top-p the engine was asked for, and what the logprobs mean', async () => {
  expect((await chat('s-1', { temperature: 0.7, top_p: 0.9 })).sampling).toEqual({ temperature: 0.7, topP: 0.9, logprobs: 'unknown' });
  expect((await chat('s-2', {})).sampling).toEqual({ temperature: 1, topP: 1, logprobs: 'unknown' });
  Object.assign(p.engine, { logprobs: 'processed' });
  expect((await chat('s-3', {})).sampling?.logprobs).toBe('processed');
});
