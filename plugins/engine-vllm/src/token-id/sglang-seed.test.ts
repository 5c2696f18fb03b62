import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { byteChatMl, eachToken } from '@clawgym/core';
import { createTokenIdEngine } from '../token-id-client';

/*
 * SGLang's per-request seed, against transcripts from SGLang's source:
 * - python/sglang/srt/server_args.py @ 0025436eab0556737d615b36a4dd3e1e26e82f3d: ServerArgs has
 *   `enable_deterministic_inference: bool = False`;
 * - python/sglang/srt/entrypoints/http_server.py @ 0025436e: `GET /get_server_info` answers
 *   `dataclasses.asdict(server_args)` plus scheduler info, `internal_states` and `version`;
 *   `/generate` catches only `ValueError`;
 * - python/sglang/srt/managers/tokenizer_manager.py @ 0025436e: `SamplingParams(**sampling_kwargs)`,
 *   so a key SamplingParams lacks is a TypeError (HTTP 500, or a cut stream);
 * - python/sglang/srt/sampling/sampling_params.py @ 00c17cafcb9e289d5ca97c50e44ada54e4fd5b03:
 *   `sampling_seed: Optional[int] = None`, an API field of SamplingParams.
 * The seed goes out as `sampling_params.sampling_seed` only where the server says it runs with
 * `--enable-deterministic-inference`, learnt once per server; elsewhere it is left out.
 */
const { tokenizer, chatTemplate } = byteChatMl();
const prompt = Int32Array.from([1, 2, 3]);
const stop = chatTemplate.stopIds[0]!;

async function transcript(info: { status: number; body: unknown }) {
  const seen: { method: string; url: string; body?: any }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body: raw ? JSON.parse(raw) : undefined });
      if (req.method === 'GET' && req.url === '/get_server_info') { res.writeHead(info.status, { 'content-type': 'application/json' }).end(JSON.stringify(info.body)); return; }
      if (req.method !== 'POST' || req.url !== '/generate') { res.writeHead(404).end('{"detail":"Not Found"}'); return; }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = { text: '', output_ids: [65, stop], meta_info: { id: 'x', finish_reason: { type: 'stop', matched: stop }, prompt_tokens: 3, completion_tokens: 2, cached_tokens: 0, weight_version: 'default', output_token_logprobs: [[-0.5, 65, null], [-0.1, stop, null]] } };
      res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }) };
}

const call = async (url: string, seed?: number) => {
  const e = createTokenIdEngine({ flavor: 'sglang', baseUrl: url, model: 'm', tokenizer, chatTemplate });
  const out = [];
  for (const s of [seed, seed]) {
    for await (const t of eachToken(e.generate({ promptIds: prompt, sampling: { maxTokens: 4, temperature: 1, topP: 1, ...(s === undefined ? {} : { seed: s }) } }))) out.push(t.tokenId);
  }
  return out;
};
/** What 0025436e's get_server_info carries, as far as the client reads it. */
const serverInfo = (deterministic: boolean) => ({ model_path: 'Qwen/Qwen3-8B', weight_version: 'default', enable_deterministic_inference: deterministic, internal_states: [{}] });

describe('SGLang sampling_seed', () => {
  it('is sent where get_server_info says enable_deterministic_inference, learnt once per server', async () => {
    const t = await transcript({ status: 200, body: serverInfo(true) });
    expect(await call(t.url, 7)).toEqual([65, stop, 65, stop]);
    expect(t.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /get_server_info', 'POST /generate', 'POST /generate']);
    expect(t.seen[1]!.body.sampling_params).toEqual({ max_new_tokens: 4, temperature: 1, top_p: 1, stop_token_ids: [...chatTemplate.stopIds], sampling_seed: 7 });
    await t.close();
  });

  it('is left out where the server runs without --enable-deterministic-inference (it would change nothing)', async () => {
    const t = await transcript({ status: 200, body: serverInfo(false) });
    await call(t.url, 7);
    expect(t.seen.filter((s) => s.url === '/generate').map((s) => 'sampling_seed' in s.body.sampling_params)).toEqual([false, false]);
    expect(t.seen.filter((s) => s.url === '/get_server_info')).toHaveLength(1);
    await t.close();
  });

  it('is left out where the server has no get_server_info (404), and nothing is asked for an unseeded call', async () => {
    const t = await transcript({ status: 404, body: { detail: 'Not Found' } });
    await call(t.url, 7);
    expect(t.seen.filter((s) => s.url === '/generate').every((s) => !('sampling_seed' in s.body.sampling_params))).toBe(true);
    await t.close();
    const u = await transcript({ status: 200, body: serverInfo(true) });
    await call(u.url);
    expect(u.seen.map((s) => s.url)).toEqual(['/generate', '/generate']);
    await u.close();
  });
});
