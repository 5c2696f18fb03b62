import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawGymError, eachToken, clippedTisLoss, ErrorCodes, type AdvantageResult, type RolloutTree, type TrainerBatch } from '@clawgym/core';
import type { TinkerServerOptions } from '@clawgym/standins';
import { TinkerTrainer, TinkerTrainerOptions, tinkerTrainerProvider } from './trainer';
import { tinkerEngineProvider } from './engine';
import { EmbeddedEngine, SharedPolicy } from '@clawgym/engine-embedded';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { computeGrpo } from '@clawgym/algo-grpo';
import { chatTemplate, config, optimizer, startStandIn, tokenizer } from './__fixtures__/stand-in';

/*
 * The Tinker client against a stand-in as strict as SkyRL's FSDP server (NovaSky-AI/SkyRL
 * a9564572: skyrl/tinker/api.py, skyrl/tinker/engine.py, skyrl/backends/skyrl_train_backend.py):
 * one model per server, no base-model sampling, tar sampler archives, lr-only optim_step,
 * skyrl.ai/* metrics, sessions reaped after their heartbeats stop. Each constraint is met by the
 * client; the relaxing flags are shown to be what makes the kinder behaviour.
 */
const ids = (...xs: number[]) => Int32Array.from(xs);
const lps = (n: number, base: number) => Float32Array.from({ length: n }, (_, i) => base - 0.3 * i);
const trees: RolloutTree[] = [0, 1].map((k) => ({
  rolloutId: `r${k}`, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: k, auxiliaryRoots: [], filterCounts: {},
  nodes: [
    { id: 0, parent: -1, kind: 'inserted', tokens: ids(10, 11, 12), callIndex: 0 },
    { id: 1, parent: 0, kind: 'generated', tokens: ids(40 + k, 41, 42, 43), logprobs: lps(4, -2), callIndex: 0 },
    { id: 2, parent: 1, kind: 'generated', tokens: ids(60, 61 + k), logprobs: lps(2, -3), callIndex: 1 },
  ],
}));
const advantages: AdvantageResult = computeGrpo({ algorithm: 'grpo', options: {}, trees });
const batch: TrainerBatch = { trees, advantages, loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss };
const retry = { attempts: 3, baseDelayMs: 10, maxDelayMs: 50, requestTimeoutMs: 5000, futureTimeoutMs: 20_000 };
const params = (p: SharedPolicy) => [...p.model.params.values()].flatMap((a) => Array.from(a));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the Tinker client against a stand-in as strict as SkyRL FSDP', () => {
  const dirs: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => { for (const c of cleanups) await c(); for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
  const tmp = (p: string) => { const d = mkdtempSync(join(tmpdir(), p)); dirs.push(d); return d; };

  async function serve(o: Partial<TinkerServerOptions> = {}) {
    const standIn = await startStandIn(o);
    cleanups.push(standIn.stop);
    return standIn;
  }
  const client = (baseUrl: string, extra: Record<string, unknown> = {}, runDir?: string) =>
    TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl, optimizer, retry, loraRank: 0, ...extra }), 1, runDir);
  const prompt = Int32Array.from(chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [] }));
  const drain = async (e: { generate: (r: any) => AsyncIterable<unknown> }) => { const out = []; for await (const t of eachToken(e.generate({ promptIds: prompt, sampling: { maxTokens: 6, temperature: 1, topP: 1, seed: 3 } }) as any)) out.push(t); return out; };

  it('refuses to sample the base model (SkyRL\'s message, with what to do); samples once the run publishes its initial weights', async () => {
    const { url } = await serve();
    const engine = await tinkerEngineProvider.create({ baseUrl: url, retry }, { runDir: '', seed: 1 });
    const err = await drain(engine).catch((e: unknown) => e) as ClawGymError;
    expect(err).toBeInstanceOf(ClawGymError);
    expect(err.message).toMatch(/does not sample the base model/);
    expect((err.cause as Error).message).toContain("Sampling requested for unknown model_id(s): ['']");
    expect(err.hint).toMatch(/publishes the initial weights/);
    const trainer = await client(url);
    await engine.syncWeights!(await trainer.publishWeights()); // what `clawgym run` does before its first rollout
    expect((await drain(engine)).length).toBeGreaterThan(0);
  });

  it('samples the base model only where the server says it does (--sample-base-model)', async () => {
    const { url } = await serve({ sampleBaseModel: true });
    const engine = await tinkerEngineProvider.create({ baseUrl: url, retry }, { runDir: '', seed: 1 });
    expect((await drain(engine)).length).toBeGreaterThan(0);
  });

  it('holds one model: a second run gets an error naming the model the server holds; the first one\'s close frees the server', async () => {
    const { url, server } = await serve();
    const first = await client(url, {}, tmp('clawgym-run-a-'));
    await first.step(batch);
    const second = await client(url, {}, tmp('clawgym-run-b-'));
    const err = await second.step(batch).catch((e: unknown) => e) as ClawGymError;
    expect(err.code).toBe(ErrorCodes.TRAINER_SERVICE);
    expect(err.message).toContain('already holds a model');
    expect(err.message).toContain(first.modelId);
    expect(err.hint).toMatch(/unload_model/);
    expect((err.cause as Error).message).toContain("SkyRLTrainBackend already has a 'policy' model");
    expect(server.loadedModel()).toBe(first.modelId);
    await first.close();
    expect(server.loadedModel()).toBeUndefined();
    await second.step(batch);
    expect(server.loadedModel()).toBe(second.modelId);
  });

  it('a relaxed server (--multi-tenant) takes the second model by retiring the first', async () => {
    const { url, server } = await serve({ multiTenant: true });
    const first = await client(url);
    await first.step(batch);
    const second = await client(url);
    await second.step(batch);
    expect(server.loadedModel()).toBe(second.modelId);
    await expect(first.step(batch)).rejects.toThrow(/Model not found|not loaded/);
  });

  it('--resume against a server that still holds the killed run\'s model: unloads it, loads the checkpoint into a new one', async () => {
    const { url, policy, server } = await serve();
    const runDir = tmp('clawgym-run-');
    const killed = await client(url, {}, runDir);
    await killed.step(batch);
    await killed.save(join(runDir, 'checkpoint'));
    const saved = params(policy);
    await killed.step(batch); // applied, never recorded: the resumed run must not keep it
    // The process dies here: no close, the server still holds the model.
    const resumed = await client(url, {}, runDir);
    await resumed.load(join(runDir, 'checkpoint'));
    expect(resumed.modelId).not.toBe(killed.modelId);
    expect(server.loadedModel()).toBe(resumed.modelId);
    expect(resumed.policyVersion()).toBe(1);
    expect(params(policy)).toEqual(saved);
    await resumed.step(batch);
  });

  it('a run killed before its first checkpoint: the next start unloads the model it left (its run folder names it)', async () => {
    const { url, server } = await serve();
    const runDir = tmp('clawgym-run-');
    const killed = await client(url, {}, runDir);
    await killed.step(batch);
    const again = await client(url, {}, runDir);
    await again.step(batch);
    expect(server.loadedModel()).toBe(again.modelId);
  });

  it('heartbeats its session, so the server keeps its model; a session whose heartbeats stopped loses it', async () => {
    const { url, server } = await serve({ sessionTimeoutMs: 1500 });
    const alive = await client(url, { heartbeatSeconds: 0.05 });
    await alive.step(batch);
    const session = (alive as unknown as { model: { sessionId: string } }).model.sessionId;
    for (let i = 0; i < 100 && server.heartbeatAt(session) === undefined; i++) await sleep(20);
    const first = server.heartbeatAt(session)!;
    expect(first).toBeDefined();
    await sleep(2000); // longer than the session timeout: only heartbeats keep the model
    expect(server.heartbeatAt(session)!).toBeGreaterThan(first);
    await alive.step(batch);
    expect(server.loadedModel()).toBe(alive.modelId);
    await alive.close();

    const quiet = await client(url, { heartbeatSeconds: 3600 });
    await quiet.step(batch);
    const q = (quiet as unknown as { model: { sessionId: string; heartbeat: () => Promise<void> } }).model;
    await q.heartbeat(); // one heartbeat, then none: SkyRL's cleanup takes such a session's models
    await sleep(2000);
    await expect(quiet.step(batch)).rejects.toThrow(/Model not found|not loaded/);
  });

  it('reads the gradient norm under SkyRL\'s name (skyrl.ai/grad_norm)', async () => {
    const { url } = await serve();
    const m = await (await client(url)).step(batch);
    expect(m.gradNorm).toBeGreaterThan(0);
    expect(Number.isFinite(m.gradNorm)).toBe(true);
  });

  it('lr-only optim_step: Adam fields other than the learning rate change nothing on the server; the config check refuses them', async () => {
    const a = await serve();
    const b = await serve();
    await (await client(a.url)).step(batch);
    await (await client(b.url, { optimizer: { ...optimizer, beta2: 0.5, weightDecay: 0.5, gradClip: 0.01 } })).step(batch);
    expect(params(b.policy)).toEqual(params(a.policy));
    const tinker = await serve({ backend: 'tinker' });
    const hosted = await serve({ backend: 'tinker' });
    await (await client(tinker.url, { backend: 'tinker' })).step(batch);
    await (await client(hosted.url, { backend: 'tinker', optimizer: { ...optimizer, beta2: 0.5, weightDecay: 0.5, gradClip: 0.01 } })).step(batch);
    expect(params(hosted.policy)).not.toEqual(params(tinker.policy));

    const refused = await tinkerTrainerProvider.create({ baseUrl: a.url, optimizer: { lr: 1e-3, beta2: 0.95, weightDecay: 0 } }, { runDir: '', seed: 1 }).catch((e: unknown) => e) as ClawGymError;
    expect(refused.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(refused.message).toContain('optimizer.beta2, optimizer.weightDecay');
    await expect(tinkerTrainerProvider.create({ baseUrl: a.url, optimizer: { lr: 1e-3, warmupSteps: 3 } }, { runDir: '', seed: 1 })).resolves.toBeDefined();
    await expect(tinkerTrainerProvider.create({ baseUrl: a.url, backend: 'tinker', optimizer: { beta2: 0.95 } }, { runDir: '', seed: 1 })).resolves.toBeDefined();
  });

  it('publishes tar sampler archives: unpacked from the shared folder, or downloaded through the archive route, for an engine here', async () => {
    const { url, policy, dataDir } = await serve();
    const shared = await client(url, { checkpointsDir: dataDir });
    await shared.step(batch);
    const viaShare = await shared.publishWeights();
    expect(existsSync(join(dataDir, shared.modelId, 'sampler_weights', 'step-1.tar.gz'))).toBe(true);
    expect(viaShare).toEqual({ path: join(dataDir, shared.modelId, 'sampler_weights', 'step-1'), version: 1, kind: 'full' });
    const mine = new SharedPolicy(config, cpuKernels(), 99);
    await new EmbeddedEngine(mine, tokenizer, chatTemplate, 1).syncWeights(viaShare);
    expect(params(mine)).toEqual(params(policy));
    await shared.close();

    const weightsDir = tmp('clawgym-weights-');
    const remote = await client(url, { weightsDir });
    await remote.step(batch);
    const viaDownload = await remote.publishWeights();
    expect(viaDownload.path).toBe(join(weightsDir, remote.modelId, 'step-1'));
    expect(readdirSync(viaDownload.path)).toContain('config.json');
    const theirs = new SharedPolicy(config, cpuKernels(), 98);
    await new EmbeddedEngine(theirs, tokenizer, chatTemplate, 1).syncWeights(viaDownload);
    expect(params(theirs)).toEqual(params(policy));
  });
});
