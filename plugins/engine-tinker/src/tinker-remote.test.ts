import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawGymError, eachToken, clippedTisLoss, ErrorCodes, type AdvantageResult, type RolloutTree, type TrainerBatch } from '@clawgym/core';
import { TinkerTrainer, TinkerTrainerOptions } from './trainer';
import { tinkerEngineProvider } from './engine';
import { EmbeddedEngine, SharedPolicy, EmbeddedTrainer } from '@clawgym/engine-embedded';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { computeGrpo } from '@clawgym/algo-grpo';
import { chatTemplate, config, optimizer, startStandIn, tokenizer } from './__fixtures__/stand-in';

const ids = (...xs: number[]) => Int32Array.from(xs);
const lps = (n: number, base: number) => Float32Array.from({ length: n }, (_, i) => base - 0.3 * i);

/** Two rollouts of one task, one forking after a shared generated prefix. */
const trees: RolloutTree[] = [0, 1].map((k) => ({
  rolloutId: `r${k}`, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: k, auxiliaryRoots: [], filterCounts: {},
  nodes: [
    { id: 0, parent: -1, kind: 'inserted', tokens: ids(10, 11, 12), callIndex: 0 },
    { id: 1, parent: 0, kind: 'generated', tokens: ids(40 + k, 41, 42, 43), logprobs: lps(4, -2), callIndex: 0 },
    { id: 2, parent: 1, kind: 'inserted', tokens: ids(20, 21), callIndex: 1 },
    { id: 3, parent: 2, kind: 'generated', tokens: ids(50, 51 + k, 52), logprobs: lps(3, -4), callIndex: 1 },
    { id: 4, parent: 1, kind: 'generated', tokens: ids(60, 61), logprobs: lps(2, -6), callIndex: 2 },
  ],
}));
const advantages: AdvantageResult = computeGrpo({ algorithm: 'grpo', options: {}, trees });
const batch: TrainerBatch = { trees, advantages, loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss };
const fastRetry = { attempts: 4, baseDelayMs: 20, maxDelayMs: 100, requestTimeoutMs: 2000, futureTimeoutMs: 20_000 };

/** A forwarding proxy whose `fault` decides, per request, to pass it on or to misbehave. */
async function faultProxy(target: string, fault: (route: string, body: string, n: number) => 'pass' | 'drop-response' | 'refuse-503' | 'slow') {
  let n = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const what = fault(req.url ?? '', body, n++);
      if (what === 'refuse-503') { res.writeHead(503, { 'content-type': 'application/json' }); res.end('{"detail":"busy"}'); return; }
      const forward = () => {
        const up = httpRequest(`${target}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' } }, (r) => {
          const out: Buffer[] = [];
          r.on('data', (c) => out.push(c));
          r.on('end', () => {
            // The server did the work; the answer never reaches the client.
            if (what === 'drop-response') { res.socket?.destroy(); return; }
            res.writeHead(r.statusCode ?? 500, { 'content-type': 'application/json' });
            res.end(Buffer.concat(out));
          });
        });
        up.end(body);
      };
      if (what === 'slow') setTimeout(forward, 3000); else forward();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }) };
}

const params = (p: SharedPolicy) => [...p.model.params.values()].flatMap((a) => Array.from(a));

describe('the Tinker API path: TinkerTrainer and TinkerEngine against the embedded trainer behind TinkerServer', () => {
  const dirs: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => { for (const c of cleanups) await c(); for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  async function serve(o: { saveDelayMs?: number } = {}) {
    const standIn = await startStandIn();
    cleanups.push(standIn.stop);
    const { trainer } = standIn;
    if (o.saveDelayMs) {
      // A save that takes a while, as a real model's does: a retry arrives while it is still writing.
      const save = trainer.save.bind(trainer);
      trainer.save = async (dir: string) => { await new Promise((r) => setTimeout(r, o.saveDelayMs)); await save(dir); };
    }
    return standIn;
  }
  const client = (baseUrl: string, extra: Record<string, unknown> = {}) => TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl, optimizer, retry: fastRetry, loraRank: 0, ...extra }), 1);

  it('trains as the in-process trainer does: same loss and metrics, the same weights after two steps', async () => {
    const local = new SharedPolicy(config, cpuKernels(), 5);
    const localTrainer = new EmbeddedTrainer(local, { ...optimizer, valueLrScale: 1 });
    const { url, policy } = await serve();
    const remote = await client(url);
    for (let s = 0; s < 2; s++) {
      const a = await localTrainer.step(batch);
      const b = await remote.step(batch);
      expect(b.loss).toBeCloseTo(a.loss, 5);
      expect(b.tokens).toBe(a.tokens);
      expect(b.mismatchAbsLogp).toBeCloseTo(a.mismatchAbsLogp, 4);
      expect(b.clipFraction).toBeCloseTo(a.clipFraction, 6);
    }
    expect(remote.policyVersion()).toBe(2);
    expect(policy.version).toBe(2);
    const x = params(local);
    const y = params(policy);
    const off = x.filter((v, i) => Math.abs(v - y[i]!) > 1e-5).length;
    // Adam turns a gradient entry of float-noise size into ±lr: allow a few such entries, no more.
    expect(off / x.length).toBeLessThan(0.002);
    expect(Math.max(...x.map((v, i) => Math.abs(v - y[i]!)))).toBeLessThan(4.1 * optimizer.lr);
  });

  it('a supervised step over the API (cross_entropy, weights 1/N) is the embedded trainer\'s supervised step', async () => {
    const local = new SharedPolicy(config, cpuKernels(), 5);
    const a = await new EmbeddedTrainer(local, { ...optimizer, valueLrScale: 1 }).supervisedStep(trees, { lr: 2e-3 });
    const { url, policy } = await serve();
    const b = await (await client(url)).supervisedStep(trees, { lr: 2e-3 });
    expect(b.tokens).toBe(a.tokens);
    expect(b.loss).toBeCloseTo(a.loss, 4);
    expect(b.gradNorm).toBeCloseTo(a.gradNorm, 4);
    const x = params(local);
    const y = params(policy);
    expect(x.filter((v, i) => Math.abs(v - y[i]!) > 1e-5).length / x.length).toBeLessThan(0.002);
  });

  it('publishes weights an embedded engine here loads, and the tinker engine samples them on the service', async () => {
    const { url, policy, dataDir } = await serve();
    const remote = await client(url, { checkpointsDir: dataDir });
    await remote.step(batch);
    const published = await remote.publishWeights();
    expect(published).toEqual({ path: join(dataDir, remote.modelId, 'sampler_weights', 'step-1'), version: 1, kind: 'full' });
    const mine = new SharedPolicy(config, cpuKernels(), 99);
    await new EmbeddedEngine(mine, tokenizer, chatTemplate, 1).syncWeights(published);
    expect(params(mine)).toEqual(params(policy));
    expect(mine.version).toBe(1);

    const remoteEngine = await tinkerEngineProvider.create({ baseUrl: url, retry: fastRetry }, { runDir: '', seed: 1 });
    await remoteEngine.syncWeights!({ path: `tinker://${remote.modelId}/step-1`, version: 1, kind: 'full' });
    expect(remoteEngine.policyVersion()).toBe(1);
    const prompt = Int32Array.from(chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [] }));
    const sampling = { maxTokens: 12, temperature: 1, topP: 1, seed: 42 };
    const got: { tokenId: number; logprob: number }[] = [];
    for await (const t of eachToken(remoteEngine.generate({ promptIds: prompt, sampling }))) got.push(t);
    const want: { tokenId: number; logprob: number }[] = [];
    for await (const t of new EmbeddedEngine(mine, tokenizer, chatTemplate, 1).generate({ promptIds: prompt, sampling })) want.push(t);
    expect(got.map((t) => t.tokenId)).toEqual(want.map((t) => t.tokenId));
    got.forEach((t, i) => expect(t.logprob).toBeCloseTo(want[i]!.logprob, 5));
    // Weights that are no longer the newest are refused, with the service's reason.
    await remote.step(batch);
    await remote.publishWeights();
    const drain = async () => { for await (const _ of remoteEngine.generate({ promptIds: prompt, sampling })); };
    await expect(drain()).rejects.toThrow(/not the newest sampler checkpoint/);
  });

  it('saves state on the service and resumes it into a new model: weights, optimiser and step count', async () => {
    const { url, policy } = await serve();
    const remote = await client(url);
    await remote.step(batch);
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-tinker-ckpt-'));
    dirs.push(dir);
    await remote.save(dir);
    const saved = params(policy);
    await remote.step(batch);
    expect(params(policy)).not.toEqual(saved);
    const resumed = await client(url);
    await resumed.load(dir);
    expect(resumed.modelId).not.toBe(remote.modelId);
    expect(resumed.policyVersion()).toBe(1);
    expect(params(policy)).toEqual(saved);
    // The retired model is refused from now on.
    await expect(remote.step(batch)).rejects.toThrow(/Model not found|not loaded/);
  });

  it('never applies a step twice: an optim_step whose answer was lost is retried under its seq_id and answered from the first future', async () => {
    const { url, policy } = await serve();
    const reference = new SharedPolicy(config, cpuKernels(), 5);
    await new EmbeddedTrainer(reference, { ...optimizer, valueLrScale: 1 }).step(batch);
    let dropped = 0;
    const proxy = await faultProxy(url, (route) => (route === '/api/v1/optim_step' && dropped++ === 0 ? 'drop-response' : 'pass'));
    cleanups.push(proxy.close);
    const remote = await client(proxy.url);
    await remote.step(batch);
    expect(dropped).toBe(2); // the first try and its retry reached the server
    expect(policy.version).toBe(1);
    const x = params(reference);
    expect(params(policy).filter((v, i) => Math.abs(v - x[i]!) > 1e-5).length / x.length).toBeLessThan(0.002);
    // The same seq_id with another request is refused, as SkyRL's create_future does.
    const res = await fetch(`${url}/api/v1/optim_step`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model_id: remote.modelId, adam_params: { learning_rate: 9 }, seq_id: 3 }) });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ detail: 'Training request sequence number was reused' });
  });

  it('a save whose answer was lost: the retry\'s 409 "already exists" means our checkpoint, used once the service lists it as completed', async () => {
    const { url, dataDir } = await serve({ saveDelayMs: 600 });
    let dropped = 0;
    const proxy = await faultProxy(url, (route) => (route === '/api/v1/save_weights_for_sampler' && dropped++ === 0 ? 'drop-response' : 'pass'));
    cleanups.push(proxy.close);
    const remote = await client(proxy.url, { checkpointsDir: dataDir });
    await remote.step(batch);
    const published = await remote.publishWeights();
    expect(dropped).toBe(2);
    expect(published.path).toBe(join(dataDir, remote.modelId, 'sampler_weights', 'step-1'));
    const mine = new SharedPolicy(config, cpuKernels(), 99);
    await new EmbeddedEngine(mine, tokenizer, chatTemplate, 1).syncWeights(published);
    expect(mine.version).toBe(1);
  });

  it('retries a service that answers 503 or too slowly, with backoff, and then goes on', async () => {
    const { url, policy } = await serve();
    let busy = 0;
    let slow = 0;
    const proxy = await faultProxy(url, (route) => {
      if (route === '/api/v1/forward' && busy++ < 2) return 'refuse-503';
      if (route === '/api/v1/optim_step' && slow++ === 0) return 'slow';
      return 'pass';
    });
    cleanups.push(proxy.close);
    const remote = await client(proxy.url);
    await remote.step(batch);
    expect(busy).toBe(3);
    expect(slow).toBe(2);
    // The slow try did reach the server after the client gave up on it: still one step.
    await new Promise((r) => setTimeout(r, 3200));
    expect(policy.version).toBe(1);
  });

  it('stops with a coded error naming the URL and what to check when the service is down', async () => {
    const dead = await faultProxy('http://127.0.0.1:9', () => 'pass');
    await dead.close(); // a port nothing listens on
    const started = Date.now();
    const err = await client(dead.url).catch((e: unknown) => e) as ClawGymError;
    expect(err).toBeInstanceOf(ClawGymError);
    expect(err.code).toBe(ErrorCodes.TRAINER_SERVICE);
    expect(err.message).toContain(`GET ${dead.url}/api/v1/healthz failed after 4 tries`);
    expect(err.hint).toContain(`curl ${dead.url}/api/v1/healthz`);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
