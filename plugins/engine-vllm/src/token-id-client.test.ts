import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { byteChatMl, tokensOf, type GenerateRequest, type GeneratedToken, type TokenStep } from '@clawgym/core';
import { createTokenIdEngine, type TokenIdEngineOptions } from './token-id-client';
import { collect } from './__fixtures__/tokens';

const { tokenizer, chatTemplate } = byteChatMl();
const IM_END = tokenizer.special('<|im_end|>');
const EXTRA_STOP = tokenizer.special('<|endoftext|>');
const MODEL = 'qwen3-test';
const promptIds = Array.from(chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hello' }] }], tools: [] }));
// What the stand-in "samples": "Hi!" then <|im_end|>, with exactly representable logprobs.
const outIds = [...tokenizer.encode('Hi!'), IM_END];
const outLps = [-0.25, -1.5, -0.125, -0.0625];
const expected: GeneratedToken[] = outIds.map((tokenId, i) => ({ tokenId, logprob: outLps[i]! }));
const request = (signal?: AbortSignal): GenerateRequest => ({
  promptIds: Int32Array.from(promptIds), signal, sampling: { maxTokens: 64, temperature: 0.7, topP: 0.9, stopIds: [EXTRA_STOP], seed: 7 },
});

const sse = (payload: unknown) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;

/** A vLLM `/v1/completions` stream chunk carrying output tokens `from`…`i` (return_token_ids, logprobs=1). */
function vllmChunk(i: number, from = i): string {
  const last = i === outIds.length - 1;
  const ids = outIds.slice(from, i + 1);
  const texts = ids.map((id) => tokenizer.decode([id]));
  const lps = outLps.slice(from, i + 1);
  return sse({
    id: 'cmpl-7f3a', object: 'text_completion', created: 1760000000, model: MODEL,
    choices: [{
      index: 0, text: texts.join(''),
      logprobs: { text_offset: texts.map((_, k) => from + k), token_logprobs: lps, tokens: texts, top_logprobs: texts.map((t, k) => ({ [t]: lps[k] })) },
      finish_reason: last ? 'stop' : null, stop_reason: last ? IM_END : null,
      prompt_token_ids: from === 0 ? promptIds : null, token_ids: ids,
    }],
    usage: null,
  });
}

/** An SGLang `/generate` stream chunk after output token `i`: cumulative by default, deltas when `incremental`. */
function sglangChunk(i: number, incremental = false): string {
  const last = i === outIds.length - 1;
  const from = incremental ? i : 0;
  return sse({
    text: tokenizer.decode(outIds.slice(from, i + 1)),
    output_ids: outIds.slice(from, i + 1),
    meta_info: {
      id: 'b1c9e0', finish_reason: last ? { type: 'stop', matched: IM_END } : null,
      prompt_tokens: promptIds.length, completion_tokens: i + 1, cached_tokens: 0, e2e_latency: 0.01,
      output_token_logprobs: outIds.slice(from, i + 1).map((id, k) => [outLps[from + k], id, null]),
    },
  });
}

const flavors = {
  vllm: {
    path: '/v1/completions',
    chunk: vllmChunk,
    body: {
      model: MODEL, prompt: promptIds, max_tokens: 64, temperature: 0.7, top_p: 0.9, seed: 7, stream: true,
      logprobs: 1, return_token_ids: true, skip_special_tokens: false,
      stop_token_ids: [IM_END, EXTRA_STOP], include_stop_str_in_output: true,
    },
  },
  sglang: {
    path: '/generate',
    // Cumulative: a chunk after token `i` holds every token so far, whatever came before (`from` unused).
    chunk: (i: number, _from?: number) => sglangChunk(i),
    body: {
      input_ids: promptIds, stream: true, return_logprob: true,
      sampling_params: { max_new_tokens: 64, temperature: 0.7, top_p: 0.9, stop_token_ids: [IM_END, EXTRA_STOP] },
    },
  },
} as const;

interface Received { method?: string; url?: string; auth?: string; body: unknown }
type Handler = (res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((done) => { s.closeAllConnections(); s.close(() => done()); })));
});

/**
 * A stand-in server on 127.0.0.1 that records each generation request (with its JSON body), then
 * runs `handler`. A GET (the SGLang client's `/get_server_info`, asked before its first seeded
 * call) is answered 404, as by a server without the route, and kept apart in `probes`.
 */
async function standIn(handler: Handler) {
  const received: Received[] = [];
  const probes: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      if (req.method === 'GET') { probes.push(req.url ?? ''); res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}'); return; }
      received.push({ method: req.method, url: req.url, auth: req.headers.authorization, body: JSON.parse(raw) });
      void handler(res, req);
    });
  });
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, received, probes };
}

const startSse = (res: ServerResponse) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.flushHeaders(); };
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms).unref());
const closed = (req: IncomingMessage) => new Promise<void>((ok) => req.socket.once('close', () => ok()));
/** `p`, or a failure after `ms` (so a broken client fails fast instead of hanging the test). */
const within = <T>(p: Promise<T>, what: string, ms = 2000) =>
  Promise.race([p, sleep(ms).then(() => { throw new Error(`timed out waiting for ${what} (${ms} ms)`); })]);

function engine(flavor: 'vllm' | 'sglang', baseUrl: string, extra: Partial<TokenIdEngineOptions> = {}) {
  return createTokenIdEngine({ flavor, baseUrl, model: MODEL, tokenizer, chatTemplate, ...extra });
}

/** The steps themselves: how the tokens were handed over. */
async function steps(it: AsyncIterable<TokenStep>): Promise<GeneratedToken[][]> {
  const out: GeneratedToken[][] = [];
  for await (const step of it) out.push([...tokensOf(step)]);
  return out;
}

describe.each(['vllm', 'sglang'] as const)('%s', (flavor) => {
  const f = flavors[flavor];

  it('sends the prompt ids verbatim and yields the ids and logprobs the server sent, in order', async () => {
    const { baseUrl, received } = await standIn((res) => {
      startSse(res);
      outIds.forEach((_, i) => res.write(f.chunk(i)));
      res.end(sse('[DONE]'));
    });
    const tokens = await collect(engine(flavor, baseUrl, { apiKey: 'sk-test' }).generate(request()));
    expect(tokens).toEqual(expected);
    expect(received).toEqual([{ method: 'POST', url: f.path, auth: 'Bearer sk-test', body: f.body }]);
  });

  it('yields the first token before the server has sent the rest', async () => {
    let release!: () => void;
    const gate = new Promise<void>((ok) => { release = ok; });
    let restSent = false;
    const { baseUrl } = await standIn(async (res) => {
      startSse(res);
      res.write(f.chunk(0));
      await Promise.race([gate, sleep(2000)]); // a buffering client would only see token 0 after this
      restSent = true;
      for (let i = 1; i < outIds.length; i++) res.write(f.chunk(i));
      res.end(sse('[DONE]'));
    });
    const it = engine(flavor, baseUrl).generate(request())[Symbol.asyncIterator]();
    const first = await within(it.next(), 'first token');
    expect(restSent).toBe(false);
    expect(tokensOf(first.value)).toEqual([expected[0]]);
    release();
    const rest = await collect({ [Symbol.asyncIterator]: () => it });
    expect([...tokensOf(first.value), ...rest]).toEqual(expected);
  });

  it('hands the tokens of one chunk over as one step, and one chunk\'s tokens only', async () => {
    // The server sends the first token on its own, then the other three in one chunk (as vLLM
    // does when it streams more than one token per chunk, and SGLang's cumulative output).
    const { baseUrl } = await standIn((res) => {
      startSse(res);
      res.write(f.chunk(0));
      res.write(f.chunk(outIds.length - 1, 1));
      res.end(sse('[DONE]'));
    });
    expect(await steps(engine(flavor, baseUrl).generate(request()))).toEqual([expected.slice(0, 1), expected.slice(1)]);
  });

  it('rejects with the HTTP status on a 500', async () => {
    const { baseUrl } = await standIn((res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'CUDA out of memory' } }));
    });
    const err = await collect(engine(flavor, baseUrl).generate(request())).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CLAWGYM_ENGINE_FAILED' });
    expect((err as Error).message).toContain('HTTP 500');
    expect((err as Error).message).toContain(`${flavor} engine`);
    expect((err as Error).message).toContain(`${baseUrl.slice(0, -1)}${f.path}`);
    expect((err as Error).message).toContain('CUDA out of memory');
  });

  it('rejects when the stream is cut mid-way', async () => {
    const { baseUrl } = await standIn(async (res, req) => {
      startSse(res);
      res.write(f.chunk(0));
      await sleep(20);
      req.socket.destroy();
    });
    const got: GeneratedToken[] = [];
    const run = async () => { for await (const step of engine(flavor, baseUrl).generate(request())) got.push(...tokensOf(step)); };
    await expect(run()).rejects.toMatchObject({ code: 'CLAWGYM_ENGINE_FAILED', message: expect.stringMatching(/request failed: terminated/) });
    expect(got).toEqual([expected[0]]);
  });

  it('rejects when the stream ends without a finish reason', async () => {
    const { baseUrl } = await standIn((res) => { startSse(res); res.write(f.chunk(0)); res.end(); });
    await expect(collect(engine(flavor, baseUrl).generate(request()))).rejects.toThrow(/ended after 1 tokens without a finish reason/);
  });

  it('closes the upstream request when the signal aborts, and ends quietly', async () => {
    let upstreamClosed!: Promise<void>;
    const { baseUrl } = await standIn((res, req) => {
      upstreamClosed = closed(req);
      startSse(res);
      res.write(f.chunk(0)); // then hang, as a long generation would
    });
    const ctl = new AbortController();
    const it = engine(flavor, baseUrl).generate(request(ctl.signal))[Symbol.asyncIterator]();
    expect(tokensOf((await within(it.next(), 'first token')).value)).toEqual([expected[0]]);
    ctl.abort();
    await within(upstreamClosed, 'upstream closed'); // seen by the stand-in without another next()
    expect(await within(it.next(), 'end of stream')).toEqual({ done: true, value: undefined });
  });
});

describe('token-id engine, details', () => {
  it('SGLang: takes only the new entries when the server streams incrementally', async () => {
    const { baseUrl } = await standIn((res) => {
      startSse(res);
      outIds.forEach((_, i) => res.write(sglangChunk(i, true)));
      res.end(sse('[DONE]'));
    });
    expect(await collect(engine('sglang', baseUrl).generate(request()))).toEqual(expected);
  });

  it('closes the upstream request when the consumer stops early', async () => {
    let upstreamClosed!: Promise<void>;
    const { baseUrl } = await standIn((res, req) => { upstreamClosed = closed(req); startSse(res); res.write(vllmChunk(0)); });
    for await (const step of engine('vllm', baseUrl).generate(request())) { expect(tokensOf(step)).toEqual([expected[0]]); break; }
    await within(upstreamClosed, 'upstream closed');
  });

  it('rejects on a malformed chunk and on an error chunk', async () => {
    const bad = await standIn((res) => { startSse(res); res.end('data: {"choices": [\n\n'); });
    await expect(collect(engine('vllm', bad.baseUrl).generate(request()))).rejects.toThrow(/vllm engine: malformed chunk/);
    const failing = await standIn((res) => {
      startSse(res);
      res.write(vllmChunk(0));
      res.end(sse({ error: { message: 'engine dead', type: 'InternalServerError', code: 500 } }) + sse('[DONE]'));
    });
    await expect(collect(engine('vllm', failing.baseUrl).generate(request()))).rejects.toThrow(/server error: engine dead/);
  });

  it('times out when the server goes silent, and closes the request', async () => {
    let upstreamClosed!: Promise<void>;
    const { baseUrl } = await standIn((res, req) => { upstreamClosed = closed(req); startSse(res); res.write(vllmChunk(0)); });
    const started = Date.now();
    await expect(collect(engine('vllm', baseUrl, { requestTimeoutMs: 150 }).generate(request())))
      .rejects.toThrow(/no response for 150 ms \(requestTimeoutMs\)/);
    expect(Date.now() - started).toBeLessThan(2000);
    await within(upstreamClosed, 'upstream closed');
  });

  it('rejects with the cause when the server cannot be reached', async () => {
    const { baseUrl } = await standIn(() => undefined);
    await new Promise<void>((ok) => { const s = servers.pop()!; s.close(() => ok()); });
    await expect(collect(engine('sglang', baseUrl).generate(request())))
      .rejects.toThrow(/sglang engine: request failed: fetch failed \(connect ECONNREFUSED .*\/generate\)/);
  });

  it('reports its name, and the version its servers start on until a sync says otherwise', () => {
    const e = engine('vllm', 'http://127.0.0.1:1', { policyVersion: () => 3 });
    expect(e.name).toBe(`vllm:${MODEL}`);
    expect(e.policyVersion()).toBe(3);
    expect(e.policyVersion('no-such-session')).toBe(3);
    expect(engine('sglang', 'http://127.0.0.1:1', { name: 'policy' }).policyVersion()).toBe(0);
  });
});
