import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { servers, transcriptServer, type Exchange } from './__fixtures__/transcript';
import { byteChatMl, type GenerateRequest } from '@clawgym/core';
import { createTokenIdEngine, type TokenIdEngineOptions } from './token-id-client';

/*
 * Conformance of the weight-sync sequences against transcripts derived from each server's source:
 *
 * SGLang, two behaviour sets, one commit each:
 * - older: python/sglang/srt/entrypoints/http_server.py @ 0025436eab0556737d615b36a4dd3e1e26e82f3d
 *   (`/pause_generation(request)` reads no body and aborts what runs; `/continue_generation`;
 *   `/update_weights_from_disk` answers {success, message, num_paused_requests}, HTTP 400 when
 *   success is false, appending " Weight version updated to X." when it set weight_version;
 *   `/get_model_info` and `/get_weight_version`, no `/model_info`; `/load_lora_adapter` and
 *   `/unload_lora_adapter` answer the tokenizer manager's result, 400 when not success). Its
 *   `/openapi.json` (FastAPI's) therefore lists `/pause_generation` without a request body.
 * - newer: docs/advanced_features/sglang_for_rl.md @ 067bfe93626b99d33a934c78ac24c0c71e5e5e17
 *   (`/pause_generation {mode: abort | retract | in_place}`, the served version at
 *   `GET /model_info`); the client still loads without a pause there: a paused update skips the
 *   model-update lock and can kill the scheduler (sglang-update.test.ts shows why).
 * The served version is also every `/generate` chunk's `meta_info.weight_version`.
 *
 * vLLM LoRA — vllm/entrypoints/serve/lora/api_router.py @ 27873cab97e41ef32a6a8bcf83fa475a23e6e921
 *   (`POST /v1/load_lora_adapter` answers 200 with the plain-text body of
 *   OpenAIServingModels.load_lora_adapter, "Success: LoRA adapter '<name>' added successfully.";
 *   an ErrorResponse with its code otherwise), LoadLoRAAdapterRequest {lora_name, lora_path,
 *   load_inplace: bool = False} (vllm/entrypoints/serve/lora/protocol.py).
 *
 * vLLM full weights — vllm/entrypoints/serve/dev/rlhf/api_router.py @ 0100a2129224e729af1b3b8ed42a900cdfe9a452
 *   (`/pause` takes `mode` as a query parameter: abort | wait | keep, answers {"status": "paused"};
 *   `/resume` {"status": "resumed"}; `/init_weight_transfer_engine {init_info}` {"message": "Weight
 *   transfer initialized"}; `/start_weight_update` (no body) {"message": "Weight update started"};
 *   `/update_weights {update_info}` {"message": "Weights updated"}; `/finish_weight_update
 *   {weight_version}` (a body field) {"message": "Weight update finished"}; `GET /weight_info`
 *   {"weight_version": ...}) and the disk backend's update info, one absolute `path`
 *   (vllm/distributed/weight_transfer/disk_engine.py @ 3b98defb1248fa873096121529d457c0f5124905).
 */

const { tokenizer, chatTemplate } = byteChatMl();
const engine = (flavor: 'vllm' | 'sglang', o: Partial<TokenIdEngineOptions>) =>
  createTokenIdEngine({ flavor, model: 'base', tokenizer, chatTemplate, syncBackoffMs: 1, ...o });

/** FastAPI's `/openapi.json`, as far as the client reads it: the newer server's `/pause_generation` takes a body. */
const openapiNew: Exchange = { method: 'GET', url: '/openapi.json', reply: { openapi: '3.1.0', paths: { '/pause_generation': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/PauseGenerationReqInput' } } } } } }, '/model_info': { get: {} }, '/update_weights_from_disk': { post: {} } } } };
/** 0025436e's: `/pause_generation(request: Request)` has no body; `/get_model_info`, no `/model_info`. */
const openapiOld: Exchange = { method: 'GET', url: '/openapi.json', reply: { openapi: '3.1.0', paths: { '/pause_generation': { post: { responses: { 200: {} } } }, '/get_model_info': { get: {} }, '/get_weight_version': { get: {} }, '/update_weights_from_disk': { post: {} }, '/load_lora_adapter': { post: {} } } } };

const sglangSequence = (path: string, v: number): Exchange[] => [
  {
    method: 'POST', url: '/update_weights_from_disk', body: { model_path: path, weight_version: String(v) },
    reply: { success: true, message: `Succeeded to update model weights. Weight version updated to ${v}.`, num_paused_requests: 0 },
  },
  { method: 'GET', url: '/model_info', reply: { model_path: path, is_generation: true, weight_version: String(v) } },
];

describe('SGLang with pause modes: update_weights_from_disk alone (a paused update can kill the scheduler)', () => {
  it('loads without pausing and serves the version the server reports', async () => {
    const s = await transcriptServer([openapiNew, ...sglangSequence('/ckpt/v1', 1), ...sglangSequence('/ckpt/v2', 2)]);
    const e = engine('sglang', { baseUrl: s.baseUrl });
    await e.syncWeights!({ path: '/ckpt/v1', version: 1, kind: 'full' });
    expect(e.policyVersion()).toBe(1);
    await e.syncWeights!({ path: '/ckpt/v2', version: 2, kind: 'full' });
    expect(s.deviations).toEqual([]);
    expect(s.consumed()).toBe(5); // what the server takes is learnt once
    expect(e.policyVersion()).toBe(2);
  });

  it('retries a failed load, then stops with an error naming the server', async () => {
    const failed: Exchange = { method: 'POST', url: '/update_weights_from_disk', body: { model_path: '/ckpt/v1', weight_version: '1' }, status: 400, reply: { success: false, message: 'Failed to get weights iterator: /ckpt/v1 not found', num_paused_requests: 0 } };
    const s = await transcriptServer([openapiNew, failed, failed]);
    const e = engine('sglang', { baseUrl: s.baseUrl, syncRetries: 1 });
    const err = await e.syncWeights!({ path: '/ckpt/v1', version: 1, kind: 'full' }).catch((x: unknown) => x);
    expect(s.deviations).toEqual([]);
    expect(s.consumed()).toBe(3);
    expect(err).toMatchObject({ code: 'CLAWGYM_ENGINE_SYNC_FAILED' });
    expect((err as Error).message).toContain(s.baseUrl);
    expect((err as Error).message).toContain('not found');
    expect(e.policyVersion()).toBe(0);
  });

  it('refuses a server that reports another version than it was given', async () => {
    const t = sglangSequence('/ckpt/v3', 3);
    t[1] = { ...t[1]!, reply: { weight_version: 'default' } };
    t.push({ method: 'GET', url: '/get_weight_version', reply: { weight_version: '2' } });
    const s = await transcriptServer([openapiNew, ...t]);
    const e = engine('sglang', { baseUrl: s.baseUrl, syncRetries: 0 });
    await expect(e.syncWeights!({ path: '/ckpt/v3', version: 3, kind: 'full' })).rejects.toThrow(/reports serving version 2 after loading version 3/);
    expect(s.deviations).toEqual([]);
  });
});

describe('SGLang at 0025436e: no pause modes, so no pause (it would abort every request in flight)', () => {
  it('loads with update_weights_from_disk alone and reads the version from /get_weight_version', async () => {
    const old = (path: string, v: number): Exchange[] => [
      { method: 'POST', url: '/update_weights_from_disk', body: { model_path: path, weight_version: String(v) }, reply: { success: true, message: `Succeeded to update model weights. Weight version updated to ${v}.`, num_paused_requests: 0 } },
      { method: 'GET', url: '/get_weight_version', reply: { weight_version: String(v) } },
    ];
    const s = await transcriptServer([openapiOld, ...old('/ckpt/v1', 1), ...old('/ckpt/v2', 2)]);
    const e = engine('sglang', { baseUrl: s.baseUrl });
    await e.syncWeights!({ path: '/ckpt/v1', version: 1, kind: 'full' });
    await e.syncWeights!({ path: '/ckpt/v2', version: 2, kind: 'full' });
    expect(s.deviations).toEqual([]);
    expect(s.consumed()).toBe(5);
    expect(e.policyVersion()).toBe(2);
  });

  it('a LoRA adapter goes through /load_lora_adapter (not update_weights_from_disk), named per version, the one two back unloaded', async () => {
    const info: Exchange = { method: 'GET', url: '/get_server_info', reply: { enable_lora: true, max_lora_rank: 64, lora_target_modules: ['all'] } };
    const loaded = (v: number): Exchange => ({ method: 'POST', url: '/load_lora_adapter', body: { lora_name: `clawgym-policy-v${v}`, lora_path: `/a/v${v}` }, reply: { success: true, error_message: '', loaded_adapters: { [`clawgym-policy-v${v}`]: `/a/v${v}` } } });
    const unloaded = (v: number): Exchange => ({ method: 'POST', url: '/unload_lora_adapter', body: { lora_name: `clawgym-policy-v${v}` }, reply: { success: true, error_message: '' } });
    const s = await transcriptServer([info, loaded(1), info, loaded(2), unloaded(0), info, loaded(3), unloaded(1)]);
    const e = engine('sglang', { baseUrl: s.baseUrl });
    for (const v of [1, 2, 3]) await e.syncWeights!({ path: `/a/v${v}`, version: v, kind: 'lora' });
    expect(s.deviations).toEqual([]);
    expect(e.policyVersion()).toBe(3);
  });

  it('labels SGLang\'s logprobs as what they are: after temperature (processed) unless told otherwise', () => {
    expect(engine('sglang', { baseUrl: 'http://127.0.0.1:9' }).logprobs).toBe('processed');
    expect(engine('sglang', { baseUrl: 'http://127.0.0.1:9', logprobs: 'raw' }).logprobs).toBe('raw');
    expect(engine('vllm', { baseUrl: 'http://127.0.0.1:9' }).logprobs).toBe('raw');
  });
});

describe('vLLM LoRA: load_lora_adapter, the adapter named per version', () => {
  const load = (v: number, path: string): Exchange => ({
    method: 'POST', url: '/v1/load_lora_adapter', body: { lora_name: `clawgym-policy-v${v}`, lora_path: path },
    reply: `Success: LoRA adapter 'clawgym-policy-v${v}' added successfully.`,
  });
  it('loads each version under its own name, drops the one two back, and asks for the adapter by name', async () => {
    const s = await transcriptServer([
      load(1, '/lora/v1'),
      load(2, '/lora/v2'),
      { method: 'POST', url: '/v1/unload_lora_adapter', body: { lora_name: 'clawgym-policy-v0' }, status: 404, reply: { error: { message: "The lora adapter 'clawgym-policy-v0' cannot be found.", type: 'NotFoundError', code: 404 } } },
    ]);
    const e = engine('vllm', { baseUrl: s.baseUrl });
    await e.syncWeights!({ path: '/lora/v1', version: 1, kind: 'lora' });
    await e.syncWeights!({ path: '/lora/v2', version: 2, kind: 'lora' });
    expect(s.deviations).toEqual([]);
    expect(s.consumed()).toBe(3);
    expect(e.policyVersion()).toBe(2);
  });

  it('fails with the server\'s error after its retries', async () => {
    const refused: Exchange = { ...load(1, '/lora/v1'), status: 400, reply: { error: { message: 'LoRA is not enabled', type: 'BadRequestError', code: 400 } } };
    const s = await transcriptServer([refused, refused, refused]);
    const e = engine('vllm', { baseUrl: s.baseUrl, syncRetries: 2 });
    await expect(e.syncWeights!({ path: '/lora/v1', version: 1, kind: 'lora' })).rejects.toMatchObject({ code: 'CLAWGYM_ENGINE_SYNC_FAILED', message: expect.stringContaining('LoRA is not enabled') });
    expect(s.consumed()).toBe(3);
  });
});

describe('vLLM full weights: pause → start_weight_update → update_weights → finish_weight_update → resume', () => {
  const init: Exchange = { method: 'POST', url: '/init_weight_transfer_engine', body: { init_info: {} }, reply: { message: 'Weight transfer initialized' } };
  const cycle = (path: string, v: number, fail = false): Exchange[] => [
    { method: 'POST', url: '/pause?mode=keep', reply: { status: 'paused' } },
    { method: 'POST', url: '/start_weight_update', reply: { message: 'Weight update started' } },
    { method: 'POST', url: '/update_weights', body: { update_info: { path } }, ...(fail ? { status: 500, reply: { detail: 'Shared-disk checkpoint directory contains no safetensors files' } } : { reply: { message: 'Weights updated' } }) },
    ...(fail ? [] : [{ method: 'POST', url: '/finish_weight_update', body: { weight_version: String(v) }, reply: { message: 'Weight update finished' } }]),
    { method: 'POST', url: '/resume', reply: { status: 'resumed' } },
    ...(fail ? [] : [{ method: 'GET', url: '/weight_info', reply: { weight_version: String(v) } }]),
  ];

  it('initialises the transfer engine once, then runs the cycle per version', async () => {
    const s = await transcriptServer([init, ...cycle('/w/v1', 1), ...cycle('/w/v2', 2)]);
    const e = engine('vllm', { baseUrl: s.baseUrl, vllmFullWeights: 'disk' });
    await e.syncWeights!({ path: '/w/v1', version: 1, kind: 'full' });
    await e.syncWeights!({ path: '/w/v2', version: 2, kind: 'full' });
    expect(s.deviations).toEqual([]);
    expect(s.consumed()).toBe(13);
    expect(e.policyVersion()).toBe(2);
  });

  it('resumes the server when an update fails, and retries the whole cycle', async () => {
    const s = await transcriptServer([init, ...cycle('/w/v1', 1, true), ...cycle('/w/v1', 1)]);
    const e = engine('vllm', { baseUrl: s.baseUrl, syncRetries: 1, vllmFullWeights: 'disk' });
    await e.syncWeights!({ path: '/w/v1', version: 1, kind: 'full' });
    expect(s.deviations).toEqual([]);
    expect(s.consumed()).toBe(11);
    expect(e.policyVersion()).toBe(1);
  });
});

describe('vLLM full weights on released vLLM', () => {
  it('is refused before any call, naming what works (released vLLM has no disk weight-transfer backend)', async () => {
    const s = await transcriptServer([]);
    const e = engine('vllm', { baseUrl: s.baseUrl });
    const err = await e.syncWeights!({ path: '/w/v1', version: 1, kind: 'full' }).catch((x: unknown) => x) as { code: string; message: string; hint: string };
    expect(err.code).toBe('CLAWGYM_CONFIG_INVALID');
    expect(err.message).toContain('nccl, ipc and sparse_nccl');
    expect(err.hint).toMatch(/engine 'sglang'.*LoRA.*engine 'tinker'/s);
    expect(s.consumed()).toBe(0);
  });

  it('a vLLM from before /weight_info (PR #49040) answers 404 there: the load still counts', async () => {
    const s = await transcriptServer([
      { method: 'POST', url: '/init_weight_transfer_engine', body: { init_info: {} }, reply: { message: 'Weight transfer initialized' } },
      { method: 'POST', url: '/pause?mode=keep', reply: { status: 'paused' } },
      { method: 'POST', url: '/start_weight_update', reply: { message: 'Weight update started' } },
      { method: 'POST', url: '/update_weights', body: { update_info: { path: '/w/v1' } }, reply: { message: 'Weights updated' } },
      { method: 'POST', url: '/finish_weight_update', body: { weight_version: '1' }, reply: { message: 'Weight update finished' } },
      { method: 'POST', url: '/resume', reply: { status: 'resumed' } },
      { method: 'GET', url: '/weight_info', status: 404, reply: { detail: 'Not Found' } },
    ]);
    const e = engine('vllm', { baseUrl: s.baseUrl, vllmFullWeights: 'disk', syncRetries: 0 });
    await e.syncWeights!({ path: '/w/v1', version: 1, kind: 'full' });
    expect(s.deviations).toEqual([]);
    expect(e.policyVersion()).toBe(1);
  });
});

describe('replicas', () => {
  const IM_END = chatTemplate.stopIds[0]!;
  /** A minimal SGLang /generate that answers one token with the weight version it serves; and the sync routes. */
  async function sglangReplica(state: { version: string; calls: string[] }, port = 0, loadMs = 0) {
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => { raw += c; });
      req.on('end', () => {
        state.calls.push(`${req.method} ${req.url}`);
        const body = raw ? JSON.parse(raw) : {};
        if (req.url === '/generate') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(`data: ${JSON.stringify({ text: '', output_ids: [IM_END], meta_info: { finish_reason: { type: 'stop' }, completion_tokens: 1, weight_version: state.version, output_token_logprobs: [[-0.5, IM_END, null]] } })}\n\ndata: [DONE]\n\n`);
        } else if (req.url === '/update_weights_from_disk') {
          setTimeout(() => {
            state.version = body.weight_version;
            res.end(JSON.stringify({ success: true, message: 'ok', num_paused_requests: 0 }));
          }, loadMs);
        } else if (req.url === '/openapi.json') {
          res.end(JSON.stringify(openapiNew.reply));
        } else if (req.url === '/model_info') {
          res.end(JSON.stringify({ weight_version: state.version }));
        } else res.end(JSON.stringify({ status: 'ok' }));
      });
    });
    servers.push(server);
    await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
    return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }
  const call = (sessionId: string): GenerateRequest => ({ promptIds: Int32Array.from([1, 2, 3]), sessionId, sampling: { maxTokens: 4, temperature: 1, topP: 1 } });
  const drain = async (e: ReturnType<typeof engine>, id: string) => { for await (const t of e.generate(call(id))) void t; };

  it('retries a sync while every replica is down, and serves again once one answers', async () => {
    const state = { version: 'default', calls: [] as string[] };
    const first = await sglangReplica(state);
    const port = Number(new URL(first.baseUrl).port);
    const e = engine('sglang', { baseUrl: first.baseUrl, syncRetries: 3, syncBackoffMs: 100, probeIntervalMs: 60_000 });
    await new Promise<void>((ok) => { first.server.closeAllConnections(); first.server.close(() => ok()); });
    await expect(drain(e, 's1')).rejects.toMatchObject({ code: 'CLAWGYM_ENGINE_FAILED' }); // marked down
    const sync = e.syncWeights!({ path: '/ckpt/v1', version: 1, kind: 'full' });
    await new Promise((ok) => setTimeout(ok, 150)); // the first attempts fail: nothing listens
    const back = { version: 'default', calls: [] as string[] };
    await sglangReplica(back, port);
    await sync;
    expect(back.version).toBe('1');
    await drain(e, 's2');
    expect(e.policyVersion('s2')).toBe(1);
  });

  it('holds new calls while a sync runs, so none starts on a replica being updated', async () => {
    const order: string[] = [];
    const state = { version: 'default', calls: order };
    const r = await sglangReplica(state, 0, 300);
    const e = engine('sglang', { baseUrl: r.baseUrl });
    const sync = e.syncWeights!({ path: '/ckpt/v1', version: 1, kind: 'full' });
    await new Promise((ok) => setTimeout(ok, 50)); // the sync is under way (the load takes 300 ms)
    await drain(e, 's1');
    await sync;
    expect(order).toEqual(['GET /openapi.json', 'POST /update_weights_from_disk', 'GET /model_info', 'POST /generate']);
    expect(e.policyVersion('s1')).toBe(1);
  });

  it('spreads sessions, keeps each on its replica, fails over, and syncs a returning replica before it serves', async () => {
    const a = { version: 'default', calls: [] as string[] };
    const b = { version: 'default', calls: [] as string[] };
    const ra = await sglangReplica(a);
    const rb = await sglangReplica(b);
    const e = engine('sglang', { replicas: [ra.baseUrl, rb.baseUrl], probeIntervalMs: 50 });
    await drain(e, 's1');
    await drain(e, 's2');
    await drain(e, 's1');
    expect(a.calls.filter((c) => c === 'POST /generate')).toHaveLength(2); // s1 twice
    expect(b.calls.filter((c) => c === 'POST /generate')).toHaveLength(1); // s2

    await e.syncWeights!({ path: '/ckpt/v1', version: 1, kind: 'full' });
    expect([a.version, b.version]).toEqual(['1', '1']); // every replica before any serves v1
    await drain(e, 's2');
    expect(e.policyVersion('s2')).toBe(1); // the version the server reported for that call

    // Replica A dies: its session's call is an engine failure; new sessions go to B.
    const port = Number(new URL(ra.baseUrl).port);
    await new Promise<void>((ok) => { ra.server.closeAllConnections(); ra.server.close(() => ok()); });
    await expect(drain(e, 's1')).rejects.toMatchObject({ code: 'CLAWGYM_ENGINE_FAILED' });
    await drain(e, 's3');
    await drain(e, 's4');
    expect(b.calls.filter((c) => c === 'POST /generate')).toHaveLength(4);

    // A sync while A is down reaches B; A is brought to it when it answers again.
    await e.syncWeights!({ path: '/ckpt/v2', version: 2, kind: 'full' });
    const back = { version: '1', calls: [] as string[] };
    await sglangReplica(back, port);
    for (let i = 0; i < 100 && !(e as { replicas(): { healthy: boolean }[] }).replicas().every((r) => r.healthy); i++) await new Promise((ok) => setTimeout(ok, 20));
    expect(back.version).toBe('2');
    expect(back.calls.slice(0, 3)).toEqual(['GET /health', 'GET /openapi.json', 'POST /update_weights_from_disk']);
    await drain(e, 's5'); // the least-loaded replica again: A
    expect(back.calls).toContain('POST /generate');
    expect(e.policyVersion('s5')).toBe(2);
    await e.close!();
  });
});
