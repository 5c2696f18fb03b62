import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteChatMl, eachToken, type Engine } from '@clawgym/core';
import { EmbeddedEngine, SharedPolicy, publishPolicy, type ModelConfig } from '@clawgym/engine-embedded';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { serveEngine, type EngineServerOptions } from '@clawgym/standins';
import { createTokenIdEngine, type TokenIdEngineOptions } from './token-id-client';
import { transcriptServer } from './__fixtures__/transcript';
import { routeOf, type Contract } from '../../engine-tinker/src/contracts';
import { ContractCheck, recordingProxy, type Exchange } from '../../engine-tinker/src/__fixtures__/contract-check';

/*
 * Every request the SGLang and vLLM clients send — generation, the probes, weight sync — checked
 * against the contracts scripts/server-contracts read from the servers' sources
 * (contracts/sglang.json, contracts/vllm.json):
 *   SGLang  sgl-project/sglang@8905cbd42 python/sglang/srt/entrypoints/http_server.py (routes),
 *           managers/io_struct.py (GenerateReqInput, UpdateWeightFromDiskReqInput, PauseGenerationReqInput…),
 *           sampling/sampling_params.py:75 (SamplingParams, built as SamplingParams(**sampling_params)
 *           in managers/tokenizer_manager.py:1167, so an unknown key is a TypeError)
 *   vLLM    vllm-project/vllm@c8109375 vllm/entrypoints/openai/completion/{api_router,protocol}.py,
 *           serve/lora/{api_router,protocol}.py, serve/dev/rlhf/api_router.py (the weight-transfer routes)
 * (upstream main of 2026-07-20 and 2026-08-03: the older commits the clients were first read
 * against are in no snapshot available here). Fields a server would drop or keep unread fail.
 * The stand-in's answers have no models to check: these routes answer plain dicts
 * (ORJSONResponse/JSONResponse) or streams, not a response_model.
 */
const contract = (name: string) => JSON.parse(readFileSync(join(__dirname, '..', 'contracts', `${name}.json`), 'utf8')) as Contract;
const { tokenizer, chatTemplate } = byteChatMl();
const config: ModelConfig = { vocabSize: tokenizer.vocabSize, dModel: 16, layers: 1, heads: 2, context: 96, mlpHidden: 32, valueHead: false };
const END = chatTemplate.stopIds[0]!;
/** FastAPI serves its own document; it is no route of the app's. */
const fastapiDoc = (e: Exchange) => e.path === '/openapi.json';

async function conversation(flavor: 'sglang' | 'vllm', serve: EngineServerOptions, o: Partial<TokenIdEngineOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-engine-contract-'));
  const policy = new SharedPolicy(config, cpuKernels(), 7);
  const server = await serveEngine(new EmbeddedEngine(policy, tokenizer, chatTemplate, 7), serve);
  const proxy = await recordingProxy(server.url);
  try {
    const engine: Engine = createTokenIdEngine({ flavor, replicas: [proxy.url], model: 'embedded', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000, ...o });
    const run = async (seed?: number) => { for await (const _ of eachToken(engine.generate({ promptIds: Int32Array.from([1, 2, 3]), sessionId: 's', sampling: { maxTokens: 4, temperature: 1, topP: 1, stopIds: [END], ...(seed === undefined ? {} : { seed }) } }))); };
    await run(5);
    for (const version of [1, 2]) {
      const next = new SharedPolicy(config, cpuKernels(), 10 + version);
      next.version = version;
      await engine.syncWeights!(await publishPolicy(next, join(dir, `w${version}`)));
      await run();
    }
    return proxy.seen;
  } finally {
    await proxy.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Problems of every request against the contract; SGLang's sampling_params also against SamplingParams. */
function problems(check: ContractCheck, seen: Exchange[]): string[] {
  return seen.filter((e) => !fastapiDoc(e)).flatMap((e) => {
    const own = check.request(e.method, e.path, e.method === 'GET' ? undefined : e.body);
    const sp = e.path === '/generate' ? (e.body as { sampling_params?: unknown }).sampling_params : undefined;
    return sp === undefined ? own : [...own, ...check.check('SamplingParams', sp).map((p) => `POST /generate sampling_params: ${p}`)];
  });
}

describe('the committed contracts (contracts/*.json)', () => {
  // SGLang's OpenAI-compatible routes take models of entrypoints/openai/protocol.py, a file the
  // script is not given (the clients use the native routes): those bodies are named, unresolved.
  const openai = ['AnthropicCountTokensRequest', 'AnthropicMessagesRequest', 'ChatCompletionRequest', 'ClassifyRequest', 'CompletionRequest', 'DetokenizeRequest', 'EmbeddingRequest', 'ResponsesRequest', 'ScoringRequest', 'TokenizeRequest', 'V1RerankReqInput'];
  it.each([['sglang', 'sgl-project/sglang', [...openai, 'ImageData', 'VideoData'].sort()], ['vllm', 'vllm-project/vllm', []]] as const)('%s is stamped with %s and a commit, every route names models it defines or says it cannot, every model compiles', (name, repo, unresolved) => {
    const c = contract(name) as Contract & Record<string, unknown>;
    expect([c['x-repository'], c['x-generated-by']]).toEqual([repo, 'scripts/server-contracts/extract.py']);
    expect(c['x-commit']).toMatch(/^[0-9a-f]{40}$/);
    expect(c['x-unresolved']).toEqual(unresolved); // and multimodal inputs the clients never send
    for (const r of c.routes) {
      expect(c['x-files']).toContain(r.source.split(':')[0]);
      if (r.bodyUnresolved) expect([c['x-unresolved'], c.definitions[r.body!]]).toEqual([expect.arrayContaining([r.body]), undefined]);
      for (const m of [r.bodyUnresolved ? undefined : r.body, r.response]) if (m) expect(c.definitions[m]).toBeDefined();
    }
    const check = new ContractCheck(c);
    for (const key of Object.keys(c.definitions)) expect(check.check(key, null)).not.toEqual([]);
  });
});

/*
 * At the commits the SGLang client was first read against, only single files are stored (read
 * one by one, `run.sh <name> --tree`): http_server.py at sgl-project/sglang@0025436eab05
 * (contracts/sglang-0025436e.json: its routes; io_struct.py, holding their body models, is stored
 * at neither pinned commit, so bodies are named and marked unresolved) and sampling_params.py at
 * 00c17cafcb9e (contracts/sglang-00c17caf.json). Their drift against 8905cbd42: /pause_generation
 * and /continue_generation take no body at 0025436e (http_server.py:1061, :1071) and a
 * PauseGenerationReqInput / ContinueGenerationReqInput at 8905cbd42; SamplingParams is the same.
 */
describe('the pinned SGLang commits (contracts/sglang-0025436e.json, sglang-00c17caf.json)', () => {
  it('the client, against the stand-in as 0025436e, uses only routes 0025436e has, with a body only where it takes one; its sampling_params fit SamplingParams at 00c17caf', async () => {
    const routes = contract('sglang-0025436e');
    expect([routes['x-commit'], contract('sglang-00c17caf')['x-commit']]).toEqual(['0025436eab0556737d615b36a4dd3e1e26e82f3d', '00c17cafcb9e289d5ca97c50e44ada54e4fd5b03']);
    const bodyless = routes.routes.filter((r) => !r.body).map((r) => r.path);
    expect(bodyless).toEqual(expect.arrayContaining(['/pause_generation', '/continue_generation', '/get_server_info']));
    expect(contract('sglang').routes.find((r) => r.path === '/pause_generation')?.body).toBe('PauseGenerationReqInput');
    const seen = (await conversation('sglang', { sglang: '0025436e' })).filter((e) => !fastapiDoc(e));
    const wrong = seen.flatMap((e) => {
      const r = routeOf(routes, e.method, e.path);
      if (!r) return [`${e.method} ${e.path}: no such route at 0025436e`];
      return !r.body && e.method !== 'GET' && e.body !== undefined && e.body !== null && Object.keys(e.body as object).length ? [`${e.method} ${e.path}: a body where 0025436e takes none`] : [];
    });
    expect(wrong).toEqual([]);
    const check = new ContractCheck(contract('sglang-00c17caf'));
    const sps = seen.filter((e) => e.path === '/generate').map((e) => (e.body as { sampling_params: unknown }).sampling_params);
    expect(sps.length).toBeGreaterThan(0);
    expect(sps.flatMap((sp) => check.check('SamplingParams', sp))).toEqual([]);
    // The check can fail: a key SamplingParams(**…) would refuse at 00c17caf.
    expect(check.check('SamplingParams', { max_new_tokens: 4, seed: 5 })).not.toEqual([]);
  }, 60_000);
});

describe('every request the SGLang and vLLM clients send fits the servers\' contracts', () => {
  it.each([['0025436e', false], ['modes', true]] as const)('SGLang (engine serve as %s, deterministic %s): generate, probes, weight sync', async (sglang, deterministic) => {
    const seen = await conversation('sglang', { sglang, sglangDeterministic: deterministic });
    const routes = new Set(seen.map((e) => e.path.split('?')[0]));
    for (const r of ['/generate', '/update_weights_from_disk', '/get_server_info']) expect(routes).toContain(r);
    expect(problems(new ContractCheck(contract('sglang')), seen)).toEqual([]);
    // Under --enable-deterministic-inference the seed goes as sampling_seed, a SamplingParams field.
    const seeds = seen.filter((e) => e.path === '/generate').map((e) => (e.body as { sampling_params: Record<string, unknown> }).sampling_params.sampling_seed);
    expect(seeds[0]).toBe(deterministic ? 5 : undefined);
  }, 60_000);

  it('vLLM (engine serve with the weight-transfer routes, vllmFullWeights: disk): completions, pause, transfer, resume', async () => {
    const seen = await conversation('vllm', { vllmDiskTransfer: true }, { vllmFullWeights: 'disk' });
    const routes = new Set(seen.map((e) => e.path.split('?')[0]));
    for (const r of ['/v1/completions', '/pause', '/init_weight_transfer_engine', '/update_weights', '/finish_weight_update', '/resume']) expect(routes).toContain(r);
    expect(problems(new ContractCheck(contract('vllm')), seen)).toEqual([]);
  }, 60_000);

  it('vLLM LoRA loads fit too (the stand-in has no adapters and refuses them, as the client is told)', async () => {
    const server = await serveEngine(new EmbeddedEngine(new SharedPolicy(config, cpuKernels(), 7), tokenizer, chatTemplate, 7), {});
    const proxy = await recordingProxy(server.url);
    try {
      const engine = createTokenIdEngine({ flavor: 'vllm', replicas: [proxy.url], model: 'embedded', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000 });
      await expect(engine.syncWeights!({ path: '/data/adapters/step-1', version: 1, kind: 'lora' })).rejects.toThrow();
      const loads = proxy.seen.filter((e) => /load_lora_adapter$/.test(e.path));
      expect(loads.length).toBeGreaterThan(0);
      expect(problems(new ContractCheck(contract('vllm')), proxy.seen)).toEqual([]);
    } finally {
      await proxy.close();
      await server.close();
    }
  });

  it('SGLang LoRA loads fit too (a server launched with --enable-lora, as a transcript: the stand-in, like SGLang without it, is refused before any load)', async () => {
    const folder = '/data/adapters/step-1';
    const s = await transcriptServer([
      { method: 'GET', url: '/get_server_info', reply: { model_path: 'embedded', enable_lora: true, max_lora_rank: 64, lora_target_modules: ['all'] } },
      { method: 'POST', url: '/load_lora_adapter', body: { lora_name: 'clawgym-policy-v1', lora_path: folder }, reply: { success: true, error_message: '', loaded_adapters: { 'clawgym-policy-v1': folder } } },
    ]);
    const proxy = await recordingProxy(s.baseUrl);
    try {
      const engine = createTokenIdEngine({ flavor: 'sglang', replicas: [proxy.url], model: 'embedded', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000 });
      await engine.syncWeights!({ path: folder, version: 1, kind: 'lora' });
      expect(s.deviations).toEqual([]);
      expect(proxy.seen.filter((e) => /load_lora_adapter$/.test(e.path))).toHaveLength(1);
      expect(problems(new ContractCheck(contract('sglang')), proxy.seen)).toEqual([]);
    } finally {
      await proxy.close();
    }
    const server = await serveEngine(new EmbeddedEngine(new SharedPolicy(config, cpuKernels(), 7), tokenizer, chatTemplate, 7), {});
    try {
      const standIn = createTokenIdEngine({ flavor: 'sglang', replicas: [server.url], model: 'embedded', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000 });
      await expect(standIn.syncWeights!({ path: folder, version: 1, kind: 'lora' })).rejects.toThrow(/--enable-lora/);
    } finally {
      await server.close();
    }
  });

  it('a body the server would drop a field of, or lacks a required field of, fails (SGLang and vLLM models, SamplingParams\' keywords)', () => {
    const sglang = new ContractCheck(contract('sglang'));
    const vllm = new ContractCheck(contract('vllm'));
    expect(sglang.request('POST', '/update_weights_from_disk', { weight_version: '1' })).toEqual(["POST /update_weights_from_disk: UpdateWeightFromDiskReqInput must have required property 'model_path'"]);
    expect(sglang.check('SamplingParams', { max_new_tokens: 2, seed: 3 })).toEqual(['SamplingParams must NOT have additional properties (seed)']);
    expect(vllm.request('POST', '/v1/load_lora_adapter', { lora_name: 'a', lora_path: '/p', load_in_place: true })).toEqual(['POST /v1/load_lora_adapter: LoadLoRAAdapterRequest must NOT have additional properties (load_in_place)']);
    expect(vllm.request('POST', '/v1/completions', { model: 'm', prompt: [1], return_token_id: true })).toEqual(['POST /v1/completions: CompletionRequest must NOT have additional properties (return_token_id)']);
  });
});
