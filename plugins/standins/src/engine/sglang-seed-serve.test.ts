import { byteChatMl, eachToken, type Engine, type GenerateRequest, type SamplingParams } from '@clawgym/core';
import { createTokenIdEngine } from '@clawgym/engine-vllm';
import { serveEngine } from './engine-server';

/*
 * The SGLang client's seed against `clawgym engine serve` as SGLang (sglang.ts): the stand-in
 * fails a request whose sampling_params holds a key SGLang's SamplingParams lacks, as SGLang does
 * (a TypeError: HTTP 500, or the stream cut after its 200), seeds the sampling with
 * `sampling_seed` only under `--sglang-deterministic`, and says which at `/get_server_info`.
 */
const { tokenizer, chatTemplate } = byteChatMl();

/** An engine that records the sampling settings it was asked for. */
function recordingEngine(): Engine & { asked: SamplingParams[] } {
  const asked: SamplingParams[] = [];
  return {
    name: 'recording', tokenizer, chatTemplate, asked,
    policyVersion: () => 0,
    async *generate(r: GenerateRequest) { asked.push(r.sampling); yield [{ tokenId: 65, logprob: -0.5 }, { tokenId: chatTemplate.stopIds[0]!, logprob: -0.1 }]; },
  };
}

const client = (url: string) => createTokenIdEngine({ flavor: 'sglang', baseUrl: url, model: 'm', tokenizer, chatTemplate, probeIntervalMs: 60_000 });
const drain = async (e: Engine, seed?: number) => {
  const out = [];
  for await (const t of eachToken(e.generate({ promptIds: Int32Array.from([1, 2]), sampling: { maxTokens: 4, temperature: 1, topP: 1, ...(seed === undefined ? {} : { seed }) } }))) out.push(t.tokenId);
  return out;
};
const post = (url: string, body: unknown) => fetch(`${url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('SGLang seed: the client against engine serve', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => { for (const c of closers) await c(); });
  const serve = async (deterministic: boolean) => {
    const engine = recordingEngine();
    const s = await serveEngine(engine, { sglangDeterministic: deterministic });
    closers.push(s.close);
    return { url: s.url, engine };
  };

  it('refuses a sampling key SGLang does not know: 500 when not streamed, a cut stream when streamed', async () => {
    const { url } = await serve(false);
    const plain = await post(url, { input_ids: [1], sampling_params: { max_new_tokens: 2, seed: 3 } });
    expect(plain.status).toBe(500);
    const streamed = await post(url, { input_ids: [1], stream: true, sampling_params: { max_new_tokens: 2, seed: 3 } });
    expect(streamed.status).toBe(200);
    await expect(streamed.text()).rejects.toThrow();
    expect((await post(url, { input_ids: [1], sampling_params: { max_new_tokens: 2, sampling_seed: 3 } })).status).toBe(200);
  });

  it('--sglang-deterministic: the client sends sampling_seed and the server samples with it', async () => {
    const { url, engine } = await serve(true);
    expect(await (await fetch(`${url}/get_server_info`)).json()).toMatchObject({ enable_deterministic_inference: true });
    const e = client(url);
    expect((await drain(e, 11)).length).toBe(2);
    expect(engine.asked.map((s) => s.seed)).toEqual([11]);
  });

  it('without it: the client leaves the seed out, and a seed sent anyway changes nothing there', async () => {
    const { url, engine } = await serve(false);
    const e = client(url);
    expect((await drain(e, 11)).length).toBe(2);
    expect((await post(url, { input_ids: [1], sampling_params: { max_new_tokens: 2, sampling_seed: 5 } })).status).toBe(200);
    expect(engine.asked.map((s) => s.seed)).toEqual([undefined, undefined]);
  });
});
