import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawGymError } from '@clawgym/core';
import { TinkerTrainer, TinkerTrainerOptions } from './trainer';
import { recordingProxy } from './__fixtures__/contract-check';
import { grpoBatch as batch, optimizer, startStandIn } from './__fixtures__/stand-in';

/*
 * What each SkyRL release does with a retried training request, and what the client does about it.
 *   SkyRL main:  NovaSky-AI/SkyRL@a9564572 skyrl/tinker/api.py:652-684 (seq_id on ForwardBackwardRequest,
 *                ForwardRequest, OptimStepRequest) and :362-409 (create_future answers a repeated
 *                (model_id, seq_id) from the first future).
 *   skyrl-v0.3.0: NovaSky-AI/SkyRL@f5bc3b78d skyrl/tinker/api.py:489-518 (no seq_id on those models; pydantic
 *                drops the field), :921-970 (each request a new future): a retry runs again.
 * `clawgym trainer serve --as skyrl@<release>` reproduces each (server-release.ts, from contracts/).
 */
const retry = { attempts: 4, baseDelayMs: 10, maxDelayMs: 50, requestTimeoutMs: 5000, futureTimeoutMs: 20_000 };

const post = async (url: string, route: string, body: unknown) => {
  const r = await fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() as Record<string, any> };
};

describe('SkyRL releases and retried training requests', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => { for (const s of stops.splice(0)) await s(); });

  async function lostOptimStep(release: 'skyrl@main' | 'skyrl@0.3.0') {
    const standIn = await startStandIn({ release, backend: 'skyrl-jax' });
    stops.push(standIn.stop);
    let dropped = 0;
    // The server applies the first optim_step; its answer never reaches the client.
    const proxy = await recordingProxy(standIn.url, (path) => (path === '/api/v1/optim_step' && dropped++ === 0 ? 'drop-response' : 'pass'));
    stops.push(proxy.close);
    const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: proxy.url, loraRank: 0, backend: 'skyrl-jax', optimizer, retry }), 1);
    stops.push(() => trainer.close().catch(() => undefined));
    const outcome = await trainer.step(batch).then(() => undefined, (e: unknown) => e);
    return { outcome, sent: proxy.seen.filter((e) => e.path === '/api/v1/optim_step').length, applied: standIn.policy.version };
  }

  it('as skyrl@0.3.0 a lost optim_step answer is not retried: the run stops with CLAWGYM_TRAINER_NOT_IDEMPOTENT, the step applied once', async () => {
    const { outcome, sent, applied } = await lostOptimStep('skyrl@0.3.0');
    expect(outcome).toBeInstanceOf(ClawGymError);
    expect((outcome as ClawGymError).code).toBe('CLAWGYM_TRAINER_NOT_IDEMPOTENT');
    expect((outcome as ClawGymError).message).toMatch(/optim_step of model model_\w+ failed in transit .* and was not retried: its \/openapi.json shows no seq_id on OptimStepRequest/);
    expect((outcome as ClawGymError).hint).toMatch(/seq_id \(main at a9564572 or later\)/);
    expect(sent).toBe(1);
    expect(applied).toBe(1);
  }, 30_000);

  it('as skyrl@main the same lost answer is retried under its seq_id and answered from the first future: applied once, the step goes on', async () => {
    const { outcome, sent, applied } = await lostOptimStep('skyrl@main');
    expect(outcome).toBeUndefined();
    expect(sent).toBe(2);
    expect(applied).toBe(1);
  }, 30_000);

  it('the stand-in as skyrl@0.3.0 behaves as that release: no seq_id in its /openapi.json, a repeated seq_id runs again, routes it lacks answer 404, required fields 422', async () => {
    const old = await startStandIn({ release: 'skyrl@0.3.0', backend: 'skyrl-jax', multiTenant: true });
    stops.push(old.stop);
    const main = await startStandIn({ release: 'skyrl@main', backend: 'skyrl-jax', multiTenant: true });
    stops.push(main.stop);
    const schemas = async (url: string) => ((await (await fetch(`${url}/openapi.json`)).json()) as { components: { schemas: Record<string, { properties: object }> } }).components.schemas;
    expect('seq_id' in (await schemas(old.url)).OptimStepRequest!.properties).toBe(false);
    expect('seq_id' in (await schemas(main.url)).OptimStepRequest!.properties).toBe(true);
    for (const s of [old, main]) {
      const { session_id } = (await post(s.url, '/api/v1/create_session', { tags: [], sdk_version: 'test' })).body;
      const created = (await post(s.url, '/api/v1/create_model', { session_id, base_model: 'embedded', lora_config: { rank: 0 } })).body;
      await post(s.url, '/api/v1/retrieve_future', { request_id: created.request_id });
      const step = { model_id: created.model_id, adam_params: { learning_rate: 1e-3 }, seq_id: 1 };
      for (let i = 0; i < 2; i++) {
        const f = (await post(s.url, '/api/v1/optim_step', step)).body;
        await post(s.url, '/api/v1/retrieve_future', { request_id: f.request_id });
      }
    }
    expect([old.policy.version, main.policy.version]).toEqual([2, 1]);
    const del = (url: string) => fetch(`${url}/api/v1/training_runs/m/checkpoints/c`, { method: 'DELETE' }).then((r) => r.status);
    expect(await del(old.url)).toBe(404);
    expect(await post(old.url, '/api/v1/optim_step', { adam_params: {} })).toEqual({ status: 422, body: { detail: JSON.stringify([{ type: 'missing', loc: ['body', 'model_id'], msg: 'Field required' }]) } });
  }, 30_000);

  it('a server without /openapi.json is taken not to deduplicate: its training calls carry no seq_id and are never retried', async () => {
    const standIn = await startStandIn({ release: 'skyrl@main', backend: 'skyrl-jax' });
    stops.push(standIn.stop);
    let dropped = 0;
    // FastAPI(openapi_url=None), or a proxy that hides it: 404.
    const proxy = await recordingProxy(standIn.url, (path) => (path === '/openapi.json' ? 'not-found' : path === '/api/v1/forward_backward' && dropped++ === 0 ? 'drop-response' : 'pass'));
    stops.push(proxy.close);
    const trainer = await TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: proxy.url, loraRank: 0, backend: 'skyrl-jax', optimizer, retry }), 1);
    stops.push(() => trainer.close().catch(() => undefined));
    const err = await trainer.step(batch).catch((e: unknown) => e) as ClawGymError;
    expect(err.code).toBe('CLAWGYM_TRAINER_NOT_IDEMPOTENT');
    expect(err.message).toMatch(/forward_backward of model .*\/openapi.json is not served/);
    expect(proxy.seen.filter((e) => /forward_backward|optim_step|\/forward$/.test(e.path)).every((e) => !('seq_id' in (e.body as object)))).toBe(true);
  }, 30_000);

  it('a weights-only load (a cold start) is refused as skyrl@0.3.0, whose load_weights has no optimizer flag and loads Adam state too (api.py:612-615, 972-999 @ f5bc3b78d); main takes it (api.py:778-783 @ a9564572)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-release-load-'));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    const outcome: Record<string, unknown> = {};
    for (const release of ['skyrl@0.3.0', 'skyrl@main'] as const) {
      const standIn = await startStandIn({ release, backend: 'skyrl-jax' });
      stops.push(standIn.stop);
      const o = TinkerTrainerOptions.parse({ baseUrl: standIn.url, loraRank: 0, backend: 'skyrl-jax', optimizer, retry });
      const first = await TinkerTrainer.create(o, 1);
      await first.step(batch);
      await first.save(join(dir, release));
      await first.close(); // the stand-in, as SkyRL, holds one full-weight model
      const next = await TinkerTrainer.create(o, 1);
      outcome[release] = await next.load(join(dir, release), { weightsOnly: true }).then(() => 'loaded', (e: ClawGymError) => e.code);
      await next.close();
    }
    expect(outcome).toEqual({ 'skyrl@0.3.0': 'CLAWGYM_TRAINER_UNSUPPORTED', 'skyrl@main': 'loaded' });
  }, 30_000);
});
