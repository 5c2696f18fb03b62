import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf, saveCheckpoint, type Datum, type Engine, type Trainer } from '@clawgym/core';
import { BACKEND_TRAITS, decodeAdam, decodeDatum, decodeLossConfig, packFolder, parseTinkerPath, SKYRL_FIXED_OPTIMIZER, unpackArchive, type BackendTraits, type TrainerBackend, type WireDatum, type WirePassInput } from '@clawgym/engine-tinker';
import { AuthRejection, StandInAuth, type StandInAuthOptions } from './server-auth';
import { passOutput } from './server-output';
import { ReleaseRules, type StandInRelease } from './server-release';
import { secondModelRefusal, SKYRL_TEXT, TinkerRequestError } from './server-rules';
import { runSample, settle, type Future } from './server-sample';

/** Options of {@link TinkerServer}. */
export interface TinkerServerOptions {
  /** The trainer served; it must implement the datum operations (`Trainer.datums`). */
  trainer: Trainer;
  /** An engine sharing the trainer's weights in process, for `asample` (optional). */
  engine?: Engine;
  /** Where checkpoints go, as SkyRL lays them out: `<dataDir>/<model_id>/<name>.tar.gz` and `…/sampler_weights/<name>.tar.gz`. */
  dataDir: string;
  /** The base model name it answers to (`get_server_capabilities`). */
  baseModel: string;
  host?: string;
  port?: number;
  /** Longest a `retrieve_future` waits before answering 408 (SkyRL: 300 s). */
  futureWaitMs?: number;
  /** Whose behaviour to reproduce (default `skyrl-fsdp`, the strictest): see `backends.ts`. */
  backend?: TrainerBackend;
  /** Kinder than SkyRL FSDP, on request: a second `create_model` retires the loaded model instead of failing. */
  multiTenant?: boolean;
  /** Kinder than SkyRL FSDP, on request: `asample` of `base_model` before any sampler checkpoint. */
  sampleBaseModel?: boolean;
  /** A session that heartbeat once and then not for this long loses its models (SkyRL `session_timeout_sec`, 300 s). */
  sessionTimeoutMs?: number;
  /** An API key to require, and hosted Tinker's JWT exchange (`server-auth.ts`); default: none, as SkyRL. */
  auth?: StandInAuthOptions;
  /** The SkyRL release whose routes and request models to apply (`server-release.ts`). */
  release?: StandInRelease;
}

const ID = /^[a-zA-Z0-9_-]+$/;

/** A checkpoint the service was asked for (SkyRL's CheckpointDB row); `time` once completed. */
interface CheckpointRow { model: string; name: string; type: 'training' | 'sampler'; status: 'pending' | 'completed' | 'failed'; time?: string }
/** A model the service was asked for (SkyRL's ModelDB row). */
interface ModelRow { id: string; session: string; baseModel: string; rank: number; created: string; status: 'created' | 'unloaded' }

/**
 * The Tinker API (SkyRL's JSON routes, `wire.ts`) in front of a trainer of this process: the
 * embedded one for `clawgym trainer serve`. It refuses what the backend it reproduces refuses
 * (`backend`, SkyRL FSDP by default): one model at a time — a second `create_model` fails with
 * SkyRL's message until `unload_model` (unless `multiTenant`); `asample` of the base model fails
 * until a sampler checkpoint exists (unless `sampleBaseModel`); `optim_step` applies only the
 * learning rate where SkyRL's does; the loss is reduced as the backend reduces it; metrics carry
 * SkyRL's names; checkpoints are tar archives named `.tar.gz`, downloadable through `…/archive`.
 * Requests run one after another in arrival order; a request carrying a `seq_id` the model has
 * seen answers the first one's future, a different one under that `seq_id` is a 409.
 */
export class TinkerServer {
  private server?: Server;
  private nextId = 1;
  private readonly futures = new Map<string, Future>();
  private readonly bySeq = new Map<string, { id: string; body: string }>();
  private readonly sessions = new Map<string, { heartbeatAt?: number }>();
  private readonly models = new Map<string, ModelRow>();
  private model?: { id: string; requests: number; rank: number };
  private readonly checkpoints = new Map<string, CheckpointRow>();
  private latestSampler?: { path: string; version: number };
  private queue: Promise<unknown> = Promise.resolve();
  private readonly base: string;
  readonly traits: BackendTraits;
  readonly auth: StandInAuth;
  readonly release: ReleaseRules;

  constructor(private readonly o: TinkerServerOptions) {
    this.release = new ReleaseRules(o.release);
    if (!o.trainer.datums) throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `trainer "${o.trainer.name}" does not take datums, so it cannot be served over the Tinker API`, { hint: 'Serve the embedded trainer (`trainer: \'embedded\'`).' });
    this.base = join(o.dataDir, 'base');
    this.auth = new StandInAuth(o.auth);
    const t = BACKEND_TRAITS[o.backend ?? 'skyrl-fsdp'];
    this.traits = { ...t, ...(o.multiTenant ? { tenancy: 'many' as const } : {}), ...(o.sampleBaseModel ? { samplesBaseModel: true } : {}) };
    o.trainer.datums.reduction = this.traits.reduction;
  }

  /** Start listening; resolves to the root URL (`http://host:port`). */
  async start(): Promise<string> {
    await mkdir(this.o.dataDir, { recursive: true });
    await saveCheckpoint(this.o.trainer, this.base); // the weights every new model starts from
    this.server = createServer((req, res) => { void this.handle(req, res); });
    await new Promise<void>((ok, fail) => { this.server!.once('error', fail); this.server!.listen(this.o.port ?? 0, this.o.host ?? '127.0.0.1', () => ok()); });
    const a = this.server.address() as { port: number };
    return `http://${this.o.host ?? '127.0.0.1'}:${a.port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((ok) => this.server!.close(() => ok()));
  }

  /** The model loaded now, if any (tests, and the CLI's status line). */
  loadedModel(): string | undefined { return this.model?.id; }

  /** Heartbeats a session sent (tests). */
  heartbeatAt(session: string): number | undefined { return this.sessions.get(session)?.heartbeatAt; }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? JSON.parse(text) as Record<string, any> : {};
      const route = (req.url ?? '').split('?')[0]!;
      const key = req.headers['x-api-key'];
      const sent = Array.isArray(key) ? key[0] : key;
      const exchanged = this.auth.exchangeRoute(req.method ?? 'GET', route, sent);
      if (exchanged === undefined) this.auth.admit(sent);
      this.reap();
      const method = req.method ?? 'GET';
      const out = exchanged ?? (method === 'GET' && route === '/openapi.json' ? this.release.openapi() : await this.route(method, route, this.release.admit(method, route, body)));
      if (out instanceof Redirect) { res.writeHead(302, { location: out.to }); res.end(); return; }
      if (Buffer.isBuffer(out)) { res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': out.length }); res.end(out); return; }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    } catch (e) {
      const [status, detail] = e instanceof TinkerRequestError || e instanceof AuthRejection ? [e.status, e.message] : e instanceof SyntaxError ? [422, `body is not JSON: ${e.message}`] : [500, messageOf(e)];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail }));
    }
  }

  private async route(method: string, route: string, b: Record<string, any>): Promise<unknown> {
    if (method === 'GET') return this.get(route);
    if (method !== 'POST') throw new TinkerRequestError(405, 'Method Not Allowed');
    switch (route) {
      case '/api/v1/create_session': {
        const id = `session_${randomBytes(4).toString('hex')}`;
        this.sessions.set(id, {});
        return { type: 'create_session', session_id: id };
      }
      case '/api/v1/session_heartbeat': {
        const s = this.sessions.get(String(b.session_id));
        if (!s) throw new TinkerRequestError(404, 'Session not found');
        s.heartbeatAt = Date.now();
        return { type: 'session_heartbeat' };
      }
      case '/api/v1/create_model': return this.createModel(b);
      case '/api/v1/unload_model': {
        const row = this.models.get(String(b.model_id));
        if (!row) throw new TinkerRequestError(404, 'Model not found');
        const rid = this.enqueue(row.id, 'unload_model', undefined, undefined, async () => {
          // SkyRL ignores (with a warning) an unload of a model that is not loaded.
          if (this.model?.id === row.id) this.model = undefined;
          row.status = 'unloaded';
          return { model_id: row.id, status: 'unloaded', type: 'unload_model' };
        });
        return { request_id: rid, model_id: row.id };
      }
      case '/api/v1/forward':
      case '/api/v1/forward_backward': {
        const input = (route === '/api/v1/forward' ? b.forward_input : b.forward_backward_input) as WirePassInput | undefined;
        if (!input || !Array.isArray(input.data)) throw new TinkerRequestError(422, `${route === '/api/v1/forward' ? 'forward_input' : 'forward_backward_input'}.data is required`);
        const type = route.slice('/api/v1/'.length);
        return this.future(b, type, async () => {
          const data: Datum[] = input.data.map((d: WireDatum) => decodeDatum(d));
          const ops = this.o.trainer.datums!;
          const out = type === 'forward' ? await ops.forward(data) : await ops.forwardBackward(data, input.loss_fn, decodeLossConfig(input.loss_fn_config));
          return passOutput(data, out.logprobs, type === 'forward' ? undefined : input.loss_fn, out.loss, decodeLossConfig(input.loss_fn_config));
        });
      }
      case '/api/v1/optim_step':
        return this.future(b, 'optim_step', async () => {
          const sent = decodeAdam(b.adam_params ?? {});
          // SkyRL FSDP/Megatron: "beta1, beta2, eps are fixed at optimizer creation" — only lr is applied.
          const adam = this.traits.optimizer === 'lr-only' ? { ...SKYRL_FIXED_OPTIMIZER, learningRate: sent.learningRate } : sent;
          const { gradNorm } = await this.o.trainer.datums!.optimStep(adam);
          return { metrics: { 'skyrl.ai/grad_norm': gradNorm, 'skyrl.ai/learning_rate': sent.learningRate } };
        });
      case '/api/v1/save_weights':
      case '/api/v1/save_weights_for_sampler': return this.save(b, route.endsWith('for_sampler'));
      case '/api/v1/load_weights': {
        const m = this.requireModel(b.model_id);
        if (m.requests > 0) throw new TinkerRequestError(400, `LoadWeights is not permitted with seq_id ${b.seq_id ?? m.requests + 1}`);
        const p = parseTinkerPath(String(b.path ?? ''));
        if (!p || p.kind !== 'weights') throw new TinkerRequestError(400, 'request.path must be in format tinker://source_model_id/weights/checkpoint_id');
        const archive = join(this.o.dataDir, p.modelId, `${p.checkpoint}.tar.gz`);
        if (!existsSync(archive)) throw new TinkerRequestError(404, `Checkpoint not found: ${p.modelId}/${p.checkpoint}`);
        return this.future({ ...b, seq_id: undefined }, 'load_weights', async () => {
          const dir = await mkdtemp(join(this.o.dataDir, '.load-'));
          try {
            await this.o.trainer.load(await unpackArchive(archive, join(dir, 'x')), { weightsOnly: b.optimizer === false });
          } finally { await rm(dir, { recursive: true, force: true }); }
          return { type: 'load_weights' };
        });
      }
      case '/api/v1/asample': return this.sample(b);
      case '/api/v1/retrieve_future': return this.retrieve(String(b.request_id));
      default: throw new TinkerRequestError(404, 'Not Found');
    }
  }

  private async get(route: string): Promise<unknown> {
    if (route === '/api/v1/healthz') return { status: 'ok' };
    if (route === '/api/v1/get_server_capabilities') return { supported_models: [{ model_name: this.o.baseModel }] };
    if (route === '/api/v1/training_runs') {
      const runs = [...this.models.values()].map((m) => this.run(m));
      return { training_runs: runs, cursor: { offset: 0, limit: 20, total_count: runs.length } };
    }
    const one = /^\/api\/v1\/training_runs\/([^/]+)$/.exec(route);
    if (one) {
      const m = this.models.get(decodeURIComponent(one[1]!));
      if (!m) throw new TinkerRequestError(404, 'Model not found');
      return this.run(m);
    }
    const listing = /^\/api\/v1\/(?:training_runs|models)\/([^/]+)\/checkpoints$/.exec(route);
    if (listing) return { checkpoints: this.completed(decodeURIComponent(listing[1]!)) };
    const archive = /^\/api\/v1\/training_runs\/([^/]+)\/checkpoints\/([^/]+)\/(archive|download)$/.exec(route);
    if (archive) {
      const [, model, name, what] = archive.map((x) => decodeURIComponent(x)) as [string, string, string, string];
      const row = this.checkpoints.get(`${model}/sampler_weights/${name}`);
      if (!row) throw new TinkerRequestError(404, `Checkpoint not found: ${model}/${name}`);
      if (row.status === 'pending') throw new TinkerRequestError(425, 'Checkpoint is still being created');
      if (row.status === 'failed') throw new TinkerRequestError(500, 'Checkpoint creation failed');
      if (what === 'archive') return new Redirect(route.replace(/\/archive$/, '/download'));
      return readFile(join(this.o.dataDir, model, 'sampler_weights', `${name}.tar.gz`));
    }
    throw new TinkerRequestError(404, 'Not Found');
  }

  /** A `TrainingRun` as SkyRL's listing answers it. */
  private run(m: ModelRow) {
    return { training_run_id: m.id, base_model: m.baseModel, model_owner: 'default', is_lora: true, corrupted: false, lora_rank: m.rank, last_request_time: m.created, last_checkpoint: null, last_sampler_checkpoint: null, user_metadata: null };
  }

  private createModel(b: Record<string, any>) {
    if (!this.sessions.has(b.session_id)) throw new TinkerRequestError(404, 'Session not found');
    const id = `model_${randomBytes(4).toString('hex')}`;
    const lora = b.lora_config ?? { rank: 0 };
    const rank = Number(lora.rank ?? 0);
    this.models.set(id, { id, session: String(b.session_id), baseModel: String(b.base_model), rank, created: new Date().toISOString(), status: 'created' });
    // As SkyRL: the POST is accepted; the refusal is the future's (retrieve_future answers 400).
    const rid = this.enqueue(id, 'create_model', undefined, undefined, async () => {
      const refusal = this.model ? secondModelRefusal(this.traits, this.model, rank) : undefined;
      if (refusal) throw new TinkerRequestError(400, refusal);
      // This stand-in holds one set of weights: a model it may take beside another replaces it.
      await this.o.trainer.load(this.base);
      this.model = { id, requests: 0, rank };
      this.latestSampler = undefined;
      // types.LoraConfig as SkyRL fills it (api.py:993-996 @ a9564572): alpha 32, a seed when none was sent.
      return { model_id: id, base_model: b.base_model, lora_config: { rank, alpha: 32, seed: lora.seed ?? randomBytes(4).readUInt32BE() >>> 1, train_attn: true, train_mlp: true, train_unembed: false } };
    });
    return { model_id: id, base_model: b.base_model, lora_config: lora, status: 'created', request_id: rid };
  }

  private save(b: Record<string, any>, sampler: boolean) {
    const name = String(b.path ?? `ss${b.sampling_session_seq_id}_seq${b.seq_id}`);
    if (!ID.test(name)) throw new TinkerRequestError(422, `path must match ${ID.source}`);
    this.requireModel(b.model_id);
    const key = `${b.model_id}/${sampler ? 'sampler_weights' : 'weights'}/${name}`;
    if (this.checkpoints.has(key)) throw new TinkerRequestError(409, `Checkpoint '${name}' already exists for model '${b.model_id}'`);
    const row: CheckpointRow = { model: String(b.model_id), name, type: sampler ? 'sampler' : 'training', status: 'pending' };
    this.checkpoints.set(key, row);
    const archive = join(this.o.dataDir, String(b.model_id), ...(sampler ? ['sampler_weights'] : []), `${name}.tar.gz`);
    return this.future({ ...b, seq_id: undefined }, sampler ? 'save_weights_for_sampler' : 'save_weights', async () => {
      const staging = await mkdtemp(join(this.o.dataDir, '.save-'));
      try {
        await saveCheckpoint(this.o.trainer, join(staging, 'model'));
        await packFolder(join(staging, 'model'), archive);
      } catch (e) {
        row.status = 'failed';
        throw e;
      } finally { await rm(staging, { recursive: true, force: true }); }
      row.status = 'completed';
      row.time = new Date().toISOString();
      if (!sampler) return { path: `tinker://${b.model_id}/weights/${name}`, type: 'save_weights' };
      const path = `tinker://${b.model_id}/${name}`;
      this.latestSampler = { path, version: this.o.trainer.policyVersion() };
      return { path, type: 'save_weights_for_sampler', sampling_session_id: null };
    });
  }

  /** Sessions that heartbeat and then went quiet for `sessionTimeoutMs` lose their models (SkyRL's `cleanup_stale_sessions`; a session that never heartbeat is never reaped). */
  private reap(): void {
    const limit = this.o.sessionTimeoutMs ?? 300_000;
    const now = Date.now();
    for (const [id, s] of this.sessions) {
      if (s.heartbeatAt === undefined || now - s.heartbeatAt <= limit) continue;
      this.sessions.delete(id);
      for (const m of this.models.values()) {
        if (m.session !== id) continue;
        m.status = 'unloaded';
        if (this.model?.id === m.id) this.model = undefined;
      }
    }
  }

  /** The completed checkpoints of a model, as SkyRL's `list_checkpoints` answers them. */
  private completed(model: string): { checkpoint_id: string; checkpoint_type: string; time: string; tinker_path: string }[] {
    return [...this.checkpoints.values()].filter((c) => c.model === model && c.status === 'completed').map((c) => ({
      checkpoint_id: c.name, checkpoint_type: c.type, time: c.time!, tinker_path: `tinker://${model}/${c.type === 'training' ? 'weights' : 'sampler_weights'}/${c.name}`,
    }));
  }

  private requireModel(id: unknown): { id: string; requests: number } {
    if (!this.model || this.model.id !== id) throw new TinkerRequestError(404, 'Model not found');
    return this.model;
  }

  /** A training request as a future, deduplicated by (model_id, seq_id). */
  private future(b: Record<string, any>, type: string, run: () => Promise<unknown>): { future_id: string; status: string; request_id: string } {
    const m = this.requireModel(b.model_id);
    const seq = b.seq_id as number | undefined;
    const body = JSON.stringify({ type, b });
    if (seq !== undefined && seq !== null) {
      const seen = this.bySeq.get(`${m.id}:${seq}`);
      if (seen) {
        if (seen.body !== body) throw new TinkerRequestError(409, 'Training request sequence number was reused');
        return { future_id: seen.id, status: 'pending', request_id: seen.id };
      }
    }
    m.requests++;
    const id = this.enqueue(m.id, type, seq, body, run);
    return { future_id: id, status: 'pending', request_id: id };
  }

  private newFuture(type: string): [string, Future] {
    const id = String(this.nextId++);
    const f: Future = { type, done: false, waiters: [] };
    this.futures.set(id, f);
    return [id, f];
  }

  private enqueue(model: string, type: string, seq: number | undefined, body: string | undefined, run: () => Promise<unknown>): string {
    const [id, f] = this.newFuture(type);
    if (seq !== undefined && seq !== null) this.bySeq.set(`${model}:${seq}`, { id, body: body! });
    this.queue = this.queue.then(async () => {
      try {
        // A request for a model that was retired meanwhile fails as SkyRL's stale ones do.
        if (type !== 'create_model' && type !== 'unload_model' && this.model?.id !== model) throw new ClawGymError(ErrorCodes.TRAINER_MODEL_STALE, `Model ${model} not loaded (likely stale request from previous server)`);
        settle(f, await run());
      } catch (e) {
        settle(f, undefined, messageOf(e));
      }
    });
    return id;
  }

  private async retrieve(id: string): Promise<unknown> {
    const f = this.futures.get(id);
    if (!f) throw new TinkerRequestError(404, 'Future not found');
    if (!f.done) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((ok) => f.waiters.push(ok)),
        new Promise<void>((ok) => { timer = setTimeout(ok, this.o.futureWaitMs ?? 60_000); }),
      ]);
      clearTimeout(timer);
      if (!f.done) throw new TinkerRequestError(408, 'Timeout waiting for result');
    }
    if (f.error !== undefined) throw new TinkerRequestError(400, f.error);
    return f.result;
  }

  /** `asample` of a sampler checkpoint — the newest, since the in-process engine samples the trainer's own weights — or of the base model where the backend allows it. */
  private sample(b: Record<string, any>): { future_id: string; status: string; request_id: string } {
    const engine = this.o.engine;
    if (!engine) throw new TinkerRequestError(400, 'this trainer service has no engine to sample with');
    const sp = b.sampling_params ?? {};
    if (sp.max_tokens === undefined || sp.max_tokens === null) throw new TinkerRequestError(400, 'max_tokens is currently required');
    if (!(sp.max_tokens > 0)) throw new TinkerRequestError(400, 'max_tokens must be a positive number');
    if ((b.base_model == null) === (b.model_path == null)) throw new TinkerRequestError(422, "When 'sampling_session_id' is not provided, exactly one of 'base_model' or 'model_path' must be provided");
    const [id, f] = this.newFuture('sample');
    if (b.model_path != null) {
      const p = parseTinkerPath(String(b.model_path));
      if (!p || (p.kind !== '' && p.kind !== 'sampler_weights')) throw new TinkerRequestError(400, 'model_path must be tinker://model_id/checkpoint_id or tinker://model_id/sampler_weights/checkpoint_id');
      if (!this.models.has(p.modelId)) throw new TinkerRequestError(404, 'Model not found');
      const row = this.checkpoints.get(`${p.modelId}/sampler_weights/${p.checkpoint}`);
      if (!row) throw new TinkerRequestError(404, `Checkpoint not found: ${p.modelId}/${p.checkpoint}`);
      if (row.status === 'pending') throw new TinkerRequestError(425, 'Checkpoint is still being created');
      const canonical = `tinker://${p.modelId}/${p.checkpoint}`;
      if (this.model?.id !== p.modelId) { settle(f, undefined, SKYRL_TEXT.unknownModel([p.modelId])); return { future_id: id, status: 'pending', request_id: id }; }
      if (!this.latestSampler || this.latestSampler.path !== canonical) throw new TinkerRequestError(400, `Checkpoint ${b.model_path} is not the newest sampler checkpoint; this server samples only ${this.latestSampler?.path ?? 'the base model'}`);
    } else if (!this.traits.samplesBaseModel) {
      // SkyRL FSDP/Megatron: the base model is model_id "", which no policy is.
      settle(f, undefined, SKYRL_TEXT.unknownModel(['']));
      return { future_id: id, status: 'pending', request_id: id };
    } else if (this.o.trainer.policyVersion() > 0) {
      throw new TinkerRequestError(400, `the base model is no longer what this server's weights are (they were trained ${this.o.trainer.policyVersion()} steps); sample ${this.latestSampler?.path ?? 'a save_weights_for_sampler checkpoint'}`);
    }
    runSample(engine, b, f);
    return { future_id: id, status: 'pending', request_id: id };
  }
}

/** A 302 answer (the checkpoint `archive` route points at `download`). */
class Redirect { constructor(readonly to: string) {} }
