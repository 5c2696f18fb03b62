import { ClawGymError, clippedTisLoss, eachToken, type AdvantageResult, type RolloutTree, type TrainerBatch } from '@clawgym/core';
import { TinkerHttp } from './http';
import { TinkerModel } from './client';
import type { TinkerServerOptions } from '@clawgym/standins';
import { TinkerTrainer, TinkerTrainerOptions } from './trainer';
import { tinkerEngineProvider } from './engine';
import { computeGrpo } from '@clawgym/algo-grpo';
import { chatTemplate, optimizer, startStandIn } from './__fixtures__/stand-in';

/*
 * The Tinker client's key exchange against `clawgym trainer serve --api-key K --jwt-auth`, the
 * stand-in for hosted Tinker with `pjwt_auth_enabled` (the flow of the Tinker SDK at e9a95e23,
 * `core/src/tinker/auth.test.ts` replays it): the stand-in takes only JWTs it issued, refuses
 * the key itself and expired JWTs, so a client that skipped or botched the exchange fails here.
 */
const KEY = 'tml-stand-in-key';
const trees: RolloutTree[] = [0, 1].map((k) => ({
  rolloutId: `r${k}`, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: k, auxiliaryRoots: [], filterCounts: {},
  nodes: [
    { id: 0, parent: -1, kind: 'inserted', tokens: Int32Array.from([10, 11, 12]), callIndex: 0 },
    { id: 1, parent: 0, kind: 'generated', tokens: Int32Array.from([40 + k, 41, 42]), logprobs: Float32Array.from([-2, -2.3, -2.6]), callIndex: 0 },
  ],
}));
const advantages: AdvantageResult = computeGrpo({ algorithm: 'grpo', options: {}, trees });
const batch: TrainerBatch = { trees, advantages, loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss };
const retry = { attempts: 3, baseDelayMs: 10, maxDelayMs: 50, requestTimeoutMs: 5000, futureTimeoutMs: 20_000 };

describe('the Tinker client against a stand-in that asks for the JWT exchange (hosted Tinker, pjwt_auth_enabled)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => { for (const c of cleanups) await c(); });

  async function serve(o: Partial<TinkerServerOptions> = {}) {
    const standIn = await startStandIn(o);
    cleanups.push(standIn.stop);
    return standIn;
  }
  const post = (url: string, route: string, body: unknown, key?: string) =>
    fetch(url + route, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) }, body: JSON.stringify(body) })
      .then(async (r) => ({ status: r.status, body: await r.json() as { detail?: string; jwt?: string; pjwt_auth_enabled?: boolean } }));

  it('refuses the key itself and requests without one; the client exchanges it, trains, publishes and samples with JWTs', async () => {
    const { url, server } = await serve({ auth: { apiKey: KEY, jwt: true } });
    expect((await post(url, '/api/v1/client/config', { sdk_version: 'x' }, KEY)).body.pjwt_auth_enabled).toBe(true);
    const keyed = await post(url, '/api/v1/create_session', { tags: [], user_metadata: {}, sdk_version: 'x' }, KEY);
    expect(keyed.status).toBe(401);
    expect(keyed.body.detail).toMatch(/takes a JWT from POST \/api\/v1\/auth\/token/);
    expect((await post(url, '/api/v1/create_session', { tags: [], user_metadata: {}, sdk_version: 'x' })).status).toBe(401);
    expect((await post(url, '/api/v1/auth/token', {}, 'tml-wrong')).status).toBe(401);
    const issuedBefore = server.auth.issued;

    const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: url, apiKey: KEY, optimizer, retry, loraRank: 0 }), 1);
    const metrics = await trainer.step(batch);
    expect(Number.isFinite(metrics.gradNorm)).toBe(true);
    const published = await trainer.publishWeights();
    const engine = await tinkerEngineProvider.create({ baseUrl: url, apiKey: KEY, retry }, { runDir: '', seed: 1 });
    await engine.syncWeights!(published);
    const prompt = Int32Array.from(chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [] }));
    const tokens = [];
    for await (const t of eachToken(engine.generate({ promptIds: prompt, sampling: { maxTokens: 4, temperature: 1, topP: 1, seed: 3 } }))) tokens.push(t);
    expect(tokens.length).toBeGreaterThan(0);
    await trainer.close?.();
    // One exchange per client (the trainer's and the engine's), not one per request.
    expect(server.auth.issued - issuedBefore).toBe(2);
  });

  it('renews the JWT before it expires; the stand-in refuses the old one once expired', async () => {
    let now = Date.now();
    const { url, server } = await serve({ auth: { apiKey: KEY, jwt: true, jwtTtlSeconds: 3600, now: () => now } });
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => { sent.push(String((init?.headers as Record<string, string> | undefined)?.['x-api-key'] ?? '')); return fetch(input, init); };
    const http = new TinkerHttp(url, KEY, retry, recording, () => now);
    const model = await TinkerModel.create(http, { baseModel: 'embedded', loraRank: 0 });
    await model.heartbeat();
    const first = sent[sent.length - 1]!;
    expect(first.startsWith('eyJ')).toBe(true);
    now += 3600_000 - 200_000; // inside the last 300 s
    await model.heartbeat();
    const second = sent[sent.length - 1]!;
    expect(second).not.toBe(first);
    expect(server.auth.issued).toBe(2);
    now += 300_000; // the first has expired, the second has not
    const old = await post(url, '/api/v1/session_heartbeat', { session_id: model.sessionId, type: 'session_heartbeat' }, first);
    expect(old).toEqual({ status: 401, body: { detail: 'JWT expired' } });
    await model.heartbeat();
    expect(sent[sent.length - 1]).toBe(second);
    expect(server.heartbeatAt(model.sessionId!)).toBeDefined();
    await TinkerModel.unload(http, model.modelId);
  });

  it('a key the server does not know stops the run at the exchange, naming the key option', async () => {
    const { url } = await serve({ auth: { apiKey: KEY, jwt: true } });
    const err = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: url, apiKey: 'tml-not-this-one', optimizer, retry, loraRank: 0 }), 1).catch((e: unknown) => e) as ClawGymError;
    expect(err).toBeInstanceOf(ClawGymError);
    expect(err.message).toMatch(/refused the API key: \/api\/v1\/client\/config answered HTTP 401: Invalid API key/);
  });

  it('without --jwt-auth: a key-checking stand-in takes the key itself (no exchange); the default one, as SkyRL, takes anything', async () => {
    const keyed = await serve({ auth: { apiKey: KEY } });
    expect((await post(keyed.url, '/api/v1/auth/token', {}, KEY)).status).toBe(404);
    const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: keyed.url, apiKey: KEY, optimizer, retry, loraRank: 0 }), 1);
    expect(Number.isFinite((await trainer.step(batch)).gradNorm)).toBe(true);
    await trainer.close?.();
    expect(keyed.server.auth.issued).toBe(0);
    const open = await serve();
    expect((await post(open.url, '/api/v1/client/config', { sdk_version: 'x' })).body).toEqual({ pjwt_auth_enabled: false });
    const anyKey = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: open.url, apiKey: 'tml-anything', optimizer, retry, loraRank: 0 }), 1);
    expect(Number.isFinite((await anyKey.step(batch)).gradNorm)).toBe(true);
    await anyKey.close?.();
  });
});
