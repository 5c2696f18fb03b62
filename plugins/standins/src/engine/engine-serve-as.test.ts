import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AdamOptions, byteChatMl, repliesByTurn } from '@clawgym/core';
import { createTokenIdEngine } from '@clawgym/engine-vllm';
import { UnigramScriptedEngine } from '../unigram/unigram-engine';
import { UnigramTrainer } from '../unigram/unigram-trainer';
import { serveEngine, type EngineServer, type EngineServerOptions } from './engine-server';
import { ENGINE_RELEASES, type EngineReleaseName } from './releases';

/*
 * `clawgym engine serve --as <server>@<commit>`: each difference between the releases, as read in
 * their sources, and ClawGym's vLLM and SGLang clients against the stand-in as each release.
 * - The route tables: plugins/engine-vllm/contracts/sglang.json (sgl-project/sglang@8905cbd4
 *   python/sglang/srt/entrypoints/http_server.py) and vllm.json (vllm-project/vllm@c8109375), written
 *   by scripts/server-contracts/extract.py. A route a server's table lacks answers 404 there.
 * - SGLang 0025436e (route shapes of main before 2025-11-17, read at a8fcbf6f):
 *   http_server.py:1057-1074 `pause_generation(request: Request)`, `continue_generation(request:
 *   Request)` read no body; :484/:499 `/get_model_info`, `/get_weight_version`, no `/model_info`.
 * - SGLang 8905cbd4: http_server.py:1612-1634 `pause_generation(obj: Annotated[PauseGenerationReqInput,
 *   Body()])` (the contract's `bodyOptional: false`), io_struct.py:1509 `mode: Literal["abort",
 *   "retract", "in_place"]`; http_server.py:713-719 `/get_weight_version` raises 404; :693 `/model_info`.
 * - Both SGLangs: `update_weights_from_disk(obj: UpdateWeightFromDiskReqInput)` with `model_path: str`
 *   required (a8fcbf6f io_struct.py:1068-1070; 8905cbd4 io_struct.py:1533-1535): FastAPI answers 422.
 * - vLLM c8109375 vllm/entrypoints/serve/dev/rlhf/api_router.py:29-35 `mode: Annotated[PauseMode,
 *   Query()]` (422 for another value), :223-226 `GET /weight_info`; 90245f41, the commit before
 *   9069a571 (PR #49040) added it, has none.
 */
const contract = (name: 'sglang' | 'vllm') => new Set((JSON.parse(readFileSync(resolve(__dirname, '../../../engine-vllm/contracts', `${name}.json`), 'utf8')) as { routes: { path: string }[] }).routes.map((r) => r.path));
const model = byteChatMl();
const dir = mkdtempSync(join(tmpdir(), 'engine-serve-as-'));
const opened: EngineServer[] = [];
afterEach(async () => { await Promise.all(opened.splice(0).map((s) => s.close())); });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const start = async (o: EngineServerOptions) => {
  const s = await serveEngine(new UnigramScriptedEngine(repliesByTurn([{ text: 'Hello.' }]), model), { servedModelName: 'm', ...o });
  opened.push(s);
  return s;
};
const call = async (url: string, route: string, body?: unknown) => {
  const [method, path] = route.split(' ') as [string, string];
  const r = await fetch(`${url}${path}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const text = await r.text();
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: r.status, json };
};

/** The routes the stand-in serves without `--as` (both protocols), but /metrics and /openapi.json, which every FastAPI server has. */
const STAND_IN_ROUTES = [
  'GET /health', 'GET /v1/models', 'POST /v1/completions', 'POST /generate', 'POST /pause_generation', 'POST /continue_generation',
  'POST /update_weights_from_disk', 'GET /get_server_info', 'GET /get_model_info', 'GET /model_info', 'GET /get_weight_version', 'POST /flush_cache',
  'POST /pause', 'POST /resume', 'GET /is_paused', 'GET /weight_info', 'POST /init_weight_transfer_engine', 'POST /start_weight_update',
  'POST /update_weights', 'POST /finish_weight_update', 'POST /v1/load_lora_adapter', 'POST /load_lora_adapter', 'POST /unload_lora_adapter',
];

describe('engine serve --as: the routes of that server only', () => {
  it.each([['sglang@8905cbd4', 'sglang'], ['vllm@c8109375', 'vllm']] as const)('%s answers 404 exactly where %s\'s route table has no such path', async (as, server) => {
    const table = contract(server);
    // vLLM's weight-transfer routes exist with VLLM_SERVER_DEV_MODE; the stand-in serves them with the disk backend.
    const s = await start({ as, vllmDiskTransfer: server === 'vllm' });
    // /get_weight_version is in SGLang's table but answers 404 there (below).
    for (const route of STAND_IN_ROUTES.filter((r) => r !== 'GET /get_weight_version')) {
      const { status } = await call(s.url, route, route.startsWith('POST') ? {} : undefined);
      expect([route, status === 404]).toEqual([route, !table.has(route.split(' ')[1]!)]);
    }
  });
});

describe('engine serve --as: SGLang 0025436e against 8905cbd4', () => {
  it('0025436e: pause and continue read no body; /model_info is absent, /get_weight_version answers', async () => {
    const s = await start({ as: 'sglang@0025436e' });
    expect((await call(s.url, 'POST /pause_generation')).status).toBe(200);
    expect((await call(s.url, 'POST /continue_generation')).status).toBe(200);
    expect((await call(s.url, 'GET /model_info')).status).toBe(404);
    expect(await call(s.url, 'GET /get_weight_version')).toEqual({ status: 200, json: { weight_version: '0' } });
  });

  it('8905cbd4: pause and continue need a body (422), a pause mode outside the Literal is 422, /get_weight_version is gone', async () => {
    const s = await start({ as: 'sglang@8905cbd4' });
    expect(await call(s.url, 'POST /pause_generation')).toEqual({ status: 422, json: { detail: [expect.objectContaining({ type: 'missing', loc: ['body'] })] } });
    expect((await call(s.url, 'POST /continue_generation')).status).toBe(422);
    expect(await call(s.url, 'POST /pause_generation', { mode: 'drain' })).toEqual({ status: 422, json: { detail: [expect.objectContaining({ type: 'literal_error', loc: ['body', 'mode'], input: 'drain' })] } });
    expect((await call(s.url, 'POST /pause_generation', { mode: 'retract' })).status).toBe(200);
    expect((await call(s.url, 'POST /continue_generation', {})).status).toBe(200);
    expect(await call(s.url, 'GET /get_weight_version')).toEqual({ status: 404, json: { detail: expect.stringMatching(/deprecated\. Please use '\/model_info'/) } });
    expect((await call(s.url, 'GET /model_info')).json).toMatchObject({ weight_version: '0' });
  });

  it.each(['sglang@0025436e', 'sglang@8905cbd4'] as const)('%s: update_weights_from_disk without model_path is 422 (FastAPI), not the handler\'s 400', async (as) => {
    const s = await start({ as });
    expect(await call(s.url, 'POST /update_weights_from_disk', { weight_version: '1' })).toEqual({ status: 422, json: { detail: [expect.objectContaining({ type: 'missing', loc: ['body', 'model_path'] })] } });
    expect((await call(s.url, 'POST /update_weights_from_disk')).json.detail[0].loc).toEqual(['body']);
  });
});

describe('engine serve --as sglang: LoRA routes as a server launched without --enable-lora', () => {
  // 8905cbd4 http_server.py:1466-1474 (LoadLoRAAdapterReqInput: lora_name, lora_path required, io_struct.py:2002-2006),
  // tokenizer_control_mixin.py:572-575: the ValueError becomes {success: false, error_message} with 400.
  it.each(['sglang@0025436e', 'sglang@8905cbd4'] as const)('%s: /load_lora_adapter answers 400 "LoRA is not enabled", 422 without lora_path', async (as) => {
    const s = await start({ as });
    expect(await call(s.url, 'POST /load_lora_adapter', { lora_name: 'a', lora_path: '/w/a' })).toEqual({ status: 400, json: { success: false, error_message: 'LoRA is not enabled. Please set `--enable-lora` to enable LoRA.', loaded_adapters: null } });
    expect((await call(s.url, 'POST /load_lora_adapter', { lora_name: 'a' })).json.detail[0].loc).toEqual(['body', 'lora_path']);
    expect((await call(s.url, 'POST /unload_lora_adapter', { lora_name: 'a' })).status).toBe(400);
    expect((await call(s.url, 'GET /get_server_info')).json).toMatchObject({ enable_lora: false });
  });
});

describe('engine serve --as: vLLM c8109375 against 90245f41', () => {
  it('a pause mode outside PauseMode is 422 (a query parameter); /weight_info only from 9069a571 on', async () => {
    const s = await start({ as: 'vllm@c8109375' });
    expect(await call(s.url, 'POST /pause?mode=drain')).toEqual({ status: 422, json: { detail: [expect.objectContaining({ type: 'literal_error', loc: ['query', 'mode'] })] } });
    expect((await call(s.url, 'POST /pause?mode=keep')).status).toBe(200);
    expect((await call(s.url, 'POST /resume')).status).toBe(200);
    expect((await call(s.url, 'GET /weight_info')).status).toBe(200);
    const old = await start({ as: 'vllm@90245f41' });
    expect((await call(old.url, 'GET /weight_info')).status).toBe(404);
  });
});

describe('ClawGym\'s clients against the stand-in as each release', () => {
  const published = async (version: number) => {
    const trainer = new UnigramTrainer(model.tokenizer.vocabSize, AdamOptions.parse({}));
    const ids = model.tokenizer.encode('Hello.');
    await trainer.datums.forwardBackward([{ modelInput: Int32Array.from(ids.map(() => 0)), targetTokens: Int32Array.from(ids), weights: new Float32Array(ids.length).fill(1) }], 'cross_entropy');
    await trainer.datums.optimStep({ learningRate: 0.05, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0 });
    const path = join(dir, `v${version}`);
    await trainer.save(path);
    return { path, version, kind: 'full' as const };
  };
  const client = (flavor: 'sglang' | 'vllm', url: string, o: { vllmFullWeights?: 'disk' } = {}) =>
    createTokenIdEngine({ flavor, baseUrl: url, model: 'm', tokenizer: model.tokenizer, chatTemplate: model.chatTemplate, syncRetries: 0, syncBackoffMs: 1, ...o });
  const reply = async (engine: ReturnType<typeof client>) => {
    const toks = [];
    for await (const s of engine.generate({ promptIds: Int32Array.from(model.tokenizer.encode('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n')), sampling: { maxTokens: 50, temperature: 1, topP: 1, stopIds: model.chatTemplate.stopIds } })) toks.push(...(Array.isArray(s) ? s : [s]));
    return toks;
  };

  it.each(['sglang@0025436e', 'sglang@8905cbd4'] as const)('the SGLang client loads full weights into %s and reads the served version back where that release reports it', async (as) => {
    const s = await start({ as });
    const engine = client('sglang', s.url);
    const before = await reply(engine);
    await engine.syncWeights!(await published(1));
    expect(engine.policyVersion()).toBe(1);
    const after = await reply(engine);
    expect(after.map((t) => t.tokenId)).toEqual(before.map((t) => t.tokenId));
    expect(after[0]!.logprob).toBeGreaterThan(before[0]!.logprob);
  });

  it('the vLLM client samples from vllm@c8109375, refuses full weights there (no route loads a folder), and with the disk backend syncs into 90245f41 without /weight_info', async () => {
    const s = await start({ as: 'vllm@c8109375' });
    expect((await reply(client('vllm', s.url))).length).toBeGreaterThan(0);
    await expect(client('vllm', s.url).syncWeights!(await published(1))).rejects.toThrow(/released vLLM has no route that loads full weights from a folder/);
    const old = await start({ as: 'vllm@90245f41', vllmDiskTransfer: true });
    const engine = client('vllm', old.url, { vllmFullWeights: 'disk' });
    await engine.syncWeights!(await published(2));
    expect(engine.policyVersion()).toBe(2);
  });

  it.each(['sglang@0025436e', 'sglang@8905cbd4'] as const)('the SGLang client refuses to send a LoRA adapter to %s, which says it was launched without --enable-lora', async (as) => {
    const s = await start({ as });
    await expect(client('sglang', s.url).syncWeights!({ path: join(dir, 'adapter'), version: 1, kind: 'lora' })).rejects.toThrow(/launched without --enable-lora[\s\S]*relaunch it with --enable-lora/);
  });

  it('each client pointed at the other server\'s release fails with the route that is missing', async () => {
    const v = await start({ as: 'vllm@c8109375' });
    await expect(client('sglang', v.url).syncWeights!(await published(3))).rejects.toThrow(/could not load weights version 3[\s\S]*update_weights_from_disk[\s\S]*404/);
    const g = await start({ as: 'sglang@8905cbd4' });
    await expect(reply(client('vllm', g.url))).resolves.toBeDefined(); // SGLang serves /v1/completions too
    await expect(client('vllm', g.url, { vllmFullWeights: 'disk' }).syncWeights!(await published(4))).rejects.toThrow(/init_weight_transfer_engine[\s\S]*404/);
  });
});

describe('the command line', () => {
  it('offers exactly the releases the stand-in knows, and refuses one it does not', () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [resolve(__dirname, '../../../../core/bin/clawgym.js'), 'engine', 'serve', ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    const help = cli('--help');
    expect(help.status).toBe(0);
    const choices = /--as <release>[\s\S]*?\(choices: ([^)]*)\)/.exec(help.stdout)![1]!.split(/,\s*/).map((c) => c.replace(/"/g, ''));
    expect(choices.sort()).toEqual((Object.keys(ENGINE_RELEASES) as EngineReleaseName[]).sort());
    const unknown = cli('--as', 'sglang@00c17caf');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/argument 'sglang@00c17caf' is invalid\. Allowed choices are/);
  });
});
