import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { byteChatMl, type GenerateRequest } from '@clawgym/core';
import { createTokenIdEngine, type TokenIdEngineOptions } from './token-id-client';
import { EmbeddedEngine, type ModelConfig, SharedPolicy, publishPolicy } from '@clawgym/engine-embedded';
import { collect, scored } from './__fixtures__/tokens';
import { cpuKernels } from '@clawgym/kernels-cpu';

/*
 * `clawgym engine serve` as separate processes (the built CLI), driven by the same vLLM and
 * SGLang clients a run uses against real servers: generation with token ids and logprobs,
 * weight sync through each server kind's routes into every replica, and kill -9 of one replica.
 */
const bin = resolve(__dirname, '../../../core/bin/clawgym.js');
const plugin = resolve(__dirname, '../../engine-embedded/dist/index.js');
const model = { dModel: 16, layers: 1, heads: 2, context: 96 };
const { tokenizer, chatTemplate } = byteChatMl();
const config: ModelConfig = { vocabSize: tokenizer.vocabSize, ...model, mlpHidden: 4 * model.dModel, valueHead: true, valueDetach: true };
const prompt = Int32Array.from(tokenizer.encode('<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n'));
const END = chatTemplate.stopIds[0]!;

const dir = mkdtempSync(join(tmpdir(), 'clawgym-engine-serve-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Start `clawgym engine serve` and resolve to its URL. */
async function startServer(flags: string[] = [], configFile = 'clawgym.config.mjs'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [bin, 'engine', 'serve', '--config', join(dir, configFile), '--port', '0', ...flags], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => { err += d; });
  const url = await new Promise<string>((ok, fail) => {
    child.stdout!.on('data', (d) => { out += d; const m = /listening on (http:\/\/\S+)/.exec(out); if (m) ok(m[1]!); });
    child.on('exit', (code) => fail(new Error(`engine serve exited ${code}: ${err}`)));
  });
  return { url, child };
}

const request = (sessionId: string, seed?: number): GenerateRequest => ({
  promptIds: prompt, sessionId, sampling: { maxTokens: 12, temperature: 1, topP: 1, stopIds: [END], ...(seed === undefined ? {} : { seed }) },
});
const client = (flavor: 'vllm' | 'sglang', replicas: string[], o: Partial<TokenIdEngineOptions> = {}) =>
  createTokenIdEngine({ flavor, replicas, model: 'embedded', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000, ...o });

/** A config that serves the embedded model of this shape. */
function writeConfig(file: string, shape: typeof model): void {
  writeFileSync(join(dir, file), [
    `import m from ${JSON.stringify(plugin)};`,
    'const embedded = m.default ?? m;',
    `export default { plugins: [embedded()], engine: { use: 'embedded', options: { model: ${JSON.stringify(shape)} } }, run: { outDir: ${JSON.stringify(join(dir, 'runs'))} } };`,
  ].join('\n'));
  writeFileSync(join(dir, 'package.json'), '{"name":"engine-serve-test","private":true}');
}

describe('clawgym engine serve, two replicas, driven by the vLLM and SGLang clients', () => {
  it('serves the embedded model, loads published weights through both protocols, and fails over when a replica is killed', async () => {
    writeConfig('clawgym.config.mjs', model);
    // The kinder behaviours, asked for: vLLM's unreleased disk weight transfer, SGLang's pause modes.
    const kind = ['--vllm-disk-transfer', '--sglang', 'modes'];
    const [a, b] = await Promise.all([startServer(kind), startServer(kind)]);
    const local = new SharedPolicy(config, cpuKernels(), 0); // the servers' initial weights (seed 0)
    const reference = new EmbeddedEngine(local, tokenizer, chatTemplate, 0);

    // vLLM /v1/completions with token ids: the same seed gives the same tokens and logprobs as in process.
    const vllm = client('vllm', [a.url, b.url], { vllmFullWeights: 'disk' });
    const want0 = await collect(reference.generate(request('ref', 7)));
    expect(await collect(vllm.generate(request('v-a', 7)))).toEqual(want0);
    expect(await collect(vllm.generate(request('v-b', 7)))).toEqual(want0); // the second session: the other replica

    // vLLM full-weight routes into both replicas, from the folder the trainer side published.
    const next = new SharedPolicy(config, cpuKernels(), 123);
    next.version = 1;
    const w1 = await publishPolicy(next, join(dir, 'weights'));
    await vllm.syncWeights!(w1);
    expect(vllm.replicas().map((r) => r.version)).toEqual([1, 1]);
    const want1 = await collect(new EmbeddedEngine(next, tokenizer, chatTemplate, 0).generate(request('ref', 7)));
    expect(want1).not.toEqual(want0);
    expect(await collect(vllm.generate(request('v-a', 7)))).toEqual(want1);
    expect(await collect(vllm.generate(request('v-b', 7)))).toEqual(want1);
    expect(vllm.policyVersion('v-b')).toBe(1);

    // SGLang /generate and update_weights_from_disk: the version each call reports, logprobs of the new weights.
    const sglang = client('sglang', [a.url, b.url]);
    const v2 = new SharedPolicy(config, cpuKernels(), 456);
    v2.version = 2;
    await sglang.syncWeights!(await publishPolicy(v2, join(dir, 'weights')));
    for (const session of ['g-a', 'g-b']) {
      const got = await collect(sglang.generate(request(session)));
      expect(got.length).toBeGreaterThan(0);
      const lps = scored(v2, prompt, got.map((t) => t.tokenId));
      got.forEach((t, i) => expect(t.logprob).toBeCloseTo(lps[i]!, 4));
      expect(sglang.policyVersion(session)).toBe(2);
    }

    // GET /metrics: a call held by pause_generation counts as running, under both servers' names, until it ends.
    const gauges = async (url: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Object.fromEntries([...text.matchAll(/^(\S+)\{model_name="embedded"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
    };
    expect(await gauges(a.url)).toEqual({ 'vllm:num_requests_running': 0, 'vllm:num_requests_waiting': 0, 'sglang:num_running_reqs': 0, 'sglang:num_queue_reqs': 0 });
    await fetch(`${a.url}/pause_generation`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"mode":"in_place"}' });
    const held = collect(sglang.generate(request('g-a'))); // g-a sticks to replica A
    for (let t = Date.now(); (await gauges(a.url))['sglang:num_running_reqs'] !== 1; await new Promise((ok) => setTimeout(ok, 5))) {
      if (Date.now() - t > 10_000) throw new Error('the held call never showed in /metrics');
    }
    expect(await gauges(a.url)).toMatchObject({ 'vllm:num_requests_running': 1, 'sglang:num_running_reqs': 1 });
    expect(await gauges(b.url)).toMatchObject({ 'vllm:num_requests_running': 0 });
    await fetch(`${a.url}/continue_generation`, { method: 'POST' });
    expect((await held).length).toBeGreaterThan(0);
    expect(await gauges(a.url)).toMatchObject({ 'vllm:num_requests_running': 0, 'sglang:num_running_reqs': 0 });

    // kill -9 replica A: the session on it fails as an engine failure; new sessions go to B.
    a.child.kill('SIGKILL');
    await new Promise((ok) => a.child.once('exit', ok));
    await expect(collect(vllm.generate(request('v-a', 7)))).rejects.toMatchObject({ code: 'CLAWGYM_ENGINE_FAILED' });
    expect(vllm.replicas().map((r) => r.healthy)).toEqual([false, true]);
    expect((await collect(vllm.generate(request('v-new', 7)))).length).toBeGreaterThan(0);
    await vllm.close!();
    await sglang.close!();
    b.child.kill('SIGTERM');
  }, 60_000);
  it('as SGLang 0025436e by default: pause_generation aborts what runs, so the client syncs without pausing; as released vLLM: no disk route', async () => {
    // A context long enough that the call below decodes for a while on any machine (4,000 tokens),
    // so that it is still running when the pause comes.
    const long = { ...model, context: 4096 };
    writeConfig('long.config.mjs', long);
    const old = await startServer([], 'long.config.mjs');
    // A pause aborts the call in flight: SGLang's finish_reason "abort".
    const sglang = client('sglang', [old.url]);
    const running = collect(sglang.generate({ ...request('held'), sampling: { ...request('held').sampling, maxTokens: 4000, stopIds: [] } }));
    for (let t = Date.now(); !/sglang:num_running_reqs\S* 1/.test(await (await fetch(`${old.url}/metrics`)).text()); await new Promise((ok) => setTimeout(ok, 5))) {
      if (Date.now() - t > 10_000) throw new Error('the call never started');
    }
    await fetch(`${old.url}/pause_generation`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"mode":"retract"}' });
    await expect(running).rejects.toThrow(/aborted/);
    await fetch(`${old.url}/continue_generation`, { method: 'POST' });
    expect((await (await fetch(`${old.url}/model_info`)).status)).toBe(404);
    // The client learns that from /openapi.json and loads without a pause; the next call runs on the new weights.
    const next = new SharedPolicy({ ...config, ...long }, cpuKernels(), 321);
    next.version = 1;
    await sglang.syncWeights!(await publishPolicy(next, join(dir, 'weights-old')));
    expect((await collect(sglang.generate(request('after')))).length).toBeGreaterThan(0);
    expect(sglang.policyVersion('after')).toBe(1);
    // Released vLLM: no route loads a folder of full weights; the client refuses before trying.
    expect((await fetch(`${old.url}/init_weight_transfer_engine`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"init_info":{}}' })).status).toBe(404);
    await expect(client('vllm', [old.url]).syncWeights!(await publishPolicy(next, join(dir, 'weights-old2')))).rejects.toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID' });
    old.child.kill('SIGTERM');
  });
});
