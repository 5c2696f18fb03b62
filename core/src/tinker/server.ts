import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Datum, DatumLossConfig } from '../contracts/datum';
import type { Engine } from '../contracts/engine';
import type { Trainer } from '../contracts/trainer';
import { ClawGymError, ErrorCodes, messageOf } from '../errors';
import { saveCheckpoint } from '../train/checkpoint';
import { tokensOf } from '../engine/token-steps';
import { decodeAdam, decodeDatum, decodeLossConfig, inputTokens, parseTinkerPath, type WireDatum, type WireModelInput, type WirePassInput, type WirePassOutput, type WireSampleOutput } from './wire';

/** Options of {@link TinkerServer}. */
export interface TinkerServerOptions {
  /** The trainer served; it must implement the datum operations (`Trainer.datums`). */
  trainer: Trainer;
  /** An engine sharing the trainer's weights in process, for `asample` (optional). */
  engine?: Engine;
  /** Where checkpoints go: `<dataDir>/<model_id>/weights/<name>` and `…/sampler_weights/<name>`. */
  dataDir: string;
  /** The base model name it answers to (`get_server_capabilities`). */
  baseModel: string;
  host?: string;
  port?: number;
  /** Longest a `retrieve_future` waits before answering 408 (SkyRL: 300 s). */
  futureWaitMs?: number;
}

interface Future { type: string; done: boolean; result?: unknown; error?: string; waiters: (() => void)[] }

/** An HTTP error with FastAPI's `{detail}` body. */
class HttpError extends Error {
  constructor(readonly status: number, detail: string) { super(detail); }
}

const ID = /^[a-zA-Z0-9_-]+$/;

/** A checkpoint the service was asked for (SkyRL's CheckpointDB row); `time` once completed. */
interface CheckpointRow { model: string; name: string; type: 'training' | 'sampler'; status: 'pending' | 'completed' | 'failed'; time?: string }

/**
 * The Tinker API (SkyRL's JSON routes, `wire.ts`) in front of a trainer of this process: the
 * embedded one for `clawgym trainer serve`. One model is trained at a time (the trainer has one
 * set of weights): `create_model` starts a new one from the base weights and retires the last.
 * Requests run one after another in arrival order. A request carrying a `seq_id` the model has
 * seen answers the first one's future (a retried request is never applied twice); a different
 * request under a seen `seq_id` is a 409, as in SkyRL's `create_future`. A save under a name the
 * model has is a 409 from the moment it was asked for, done or not (SkyRL's pending CheckpointDB
 * row); `GET /api/v1/training_runs/<model_id>/checkpoints` lists the completed ones. Checkpoints
 * live on disk, so a restarted server can load them into a new model.
 */
export class TinkerServer {
  private server?: Server;
  private nextId = 1;
  private readonly futures = new Map<string, Future>();
  private readonly bySeq = new Map<string, { id: string; body: string }>();
  private readonly sessions = new Set<string>();
  private model?: { id: string; requests: number };
  /** Every checkpoint asked for, by `<model_id>/<kind>/<name>`: pending until its save is done, as SkyRL's CheckpointDB rows. */
  private readonly checkpoints = new Map<string, CheckpointRow>();
  private latestSampler?: { path: string; version: number };
  private queue: Promise<unknown> = Promise.resolve();
  private readonly base: string;

  constructor(private readonly o: TinkerServerOptions) {
    if (!o.trainer.datums) throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `trainer "${o.trainer.name}" does not take datums, so it cannot be served over the Tinker API`, { hint: 'Serve the embedded trainer (`trainer: \'embedded\'`).' });
    this.base = join(o.dataDir, 'base');
  }

  /** Start listening; resolves to the root URL (`http://host:port`). */
  async start(): Promise<string> {
    await mkdir(this.o.dataDir, { recursive: true });
    // The weights every new model starts from.
    await saveCheckpoint(this.o.trainer, this.base);
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

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? JSON.parse(text) as Record<string, any> : {};
      const route = (req.url ?? '').split('?')[0]!;
      send(200, await this.route(req.method ?? 'GET', route, body));
    } catch (e) {
      if (e instanceof HttpError) send(e.status, { detail: e.message });
      else if (e instanceof SyntaxError) send(422, { detail: `body is not JSON: ${e.message}` });
      else send(500, { detail: messageOf(e) });
    }
  }

  private async route(method: string, route: string, b: Record<string, any>): Promise<unknown> {
    if (method === 'GET' && route === '/api/v1/healthz') return { status: 'ok' };
    if (method === 'GET' && route === '/api/v1/get_server_capabilities') return { supported_models: [{ model_name: this.o.baseModel }] };
    const listing = method === 'GET' && /^\/api\/v1\/(?:training_runs|models)\/([^/]+)\/checkpoints$/.exec(route);
    if (listing) return { checkpoints: this.completed(decodeURIComponent(listing[1]!)) };
    if (method !== 'POST') throw new HttpError(405, 'Method Not Allowed');
    switch (route) {
      case '/api/v1/create_session': {
        const id = `session_${randomBytes(4).toString('hex')}`;
        this.sessions.add(id);
        return { type: 'create_session', session_id: id };
      }
      case '/api/v1/create_model': {
        if (!this.sessions.has(b.session_id)) throw new HttpError(404, 'Session not found');
        const id = `model_${randomBytes(4).toString('hex')}`;
        const lora = b.lora_config ?? { rank: 0 };
        const rid = this.enqueue(id, 'create_model', undefined, undefined, async () => {
          await this.o.trainer.load(this.base);
          this.model = { id, requests: 0 };
          this.latestSampler = undefined;
          return { model_id: id, base_model: b.base_model, lora_config: lora };
        });
        return { model_id: id, base_model: b.base_model, lora_config: lora, status: 'created', request_id: rid };
      }
      case '/api/v1/forward':
      case '/api/v1/forward_backward': {
        const input = (route === '/api/v1/forward' ? b.forward_input : b.forward_backward_input) as WirePassInput | undefined;
        if (!input || !Array.isArray(input.data)) throw new HttpError(422, `${route === '/api/v1/forward' ? 'forward_input' : 'forward_backward_input'}.data is required`);
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
          const { gradNorm } = await this.o.trainer.datums!.optimStep(decodeAdam(b.adam_params ?? {}));
          return { metrics: { grad_norm: gradNorm } };
        });
      case '/api/v1/save_weights':
      case '/api/v1/save_weights_for_sampler': {
        const sampler = route.endsWith('for_sampler');
        const name = String(b.path ?? `ss${b.sampling_session_seq_id}_seq${b.seq_id}`);
        if (!ID.test(name)) throw new HttpError(422, `path must match ${ID.source}`);
        this.requireModel(b.model_id);
        const key = `${b.model_id}/${sampler ? 'sampler_weights' : 'weights'}/${name}`;
        if (this.checkpoints.has(key)) throw new HttpError(409, `Checkpoint '${name}' already exists for model '${b.model_id}'`);
        const row: CheckpointRow = { model: String(b.model_id), name, type: sampler ? 'sampler' : 'training', status: 'pending' };
        this.checkpoints.set(key, row);
        return this.future({ ...b, seq_id: undefined }, sampler ? 'save_weights_for_sampler' : 'save_weights', async () => {
          try {
            await saveCheckpoint(this.o.trainer, join(this.o.dataDir, key));
          } catch (e) {
            row.status = 'failed';
            throw e;
          }
          row.status = 'completed';
          row.time = new Date().toISOString();
          if (!sampler) return { path: `tinker://${b.model_id}/weights/${name}`, type: 'save_weights' };
          const path = `tinker://${b.model_id}/${name}`;
          this.latestSampler = { path, version: this.o.trainer.policyVersion() };
          return { path, type: 'save_weights_for_sampler', sampling_session_id: null };
        });
      }
      case '/api/v1/load_weights': {
        const m = this.requireModel(b.model_id);
        if (m.requests > 0) throw new HttpError(400, `LoadWeights is not permitted with seq_id ${b.seq_id ?? m.requests + 1}`);
        const p = parseTinkerPath(String(b.path ?? ''));
        if (!p || p.kind !== 'weights') throw new HttpError(400, 'request.path must be in format tinker://source_model_id/weights/checkpoint_id');
        const dir = join(this.o.dataDir, p.modelId, 'weights', p.checkpoint);
        if (!existsSync(join(dir, 'config.json'))) throw new HttpError(404, `Checkpoint not found: ${b.path}`);
        return this.future({ ...b, seq_id: undefined }, 'load_weights', async () => {
          await this.o.trainer.load(dir, { weightsOnly: b.optimizer === false });
          return { type: 'load_weights' };
        });
      }
      case '/api/v1/asample':
        return this.sample(b);
      case '/api/v1/retrieve_future':
        return this.retrieve(String(b.request_id));
      default:
        throw new HttpError(404, 'Not Found');
    }
  }

  /** The completed checkpoints of a model, as SkyRL's `list_checkpoints` answers them. */
  private completed(model: string): { checkpoint_id: string; checkpoint_type: string; time: string; tinker_path: string }[] {
    return [...this.checkpoints.values()].filter((c) => c.model === model && c.status === 'completed').map((c) => ({
      checkpoint_id: c.name, checkpoint_type: c.type, time: c.time!, tinker_path: `tinker://${model}/${c.type === 'training' ? 'weights' : 'sampler_weights'}/${c.name}`,
    }));
  }

  private requireModel(id: unknown): { id: string; requests: number } {
    if (!this.model || this.model.id !== id) throw new HttpError(404, 'Model not found');
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
        if (seen.body !== body) throw new HttpError(409, 'Training request sequence number was reused');
        return { future_id: seen.id, status: 'pending', request_id: seen.id };
      }
    }
    m.requests++;
    const id = this.enqueue(m.id, type, seq, body, run);
    return { future_id: id, status: 'pending', request_id: id };
  }

  private enqueue(model: string, type: string, seq: number | undefined, body: string | undefined, run: () => Promise<unknown>): string {
    const id = String(this.nextId++);
    const f: Future = { type, done: false, waiters: [] };
    this.futures.set(id, f);
    if (seq !== undefined && seq !== null) this.bySeq.set(`${model}:${seq}`, { id, body: body! });
    this.queue = this.queue.then(async () => {
      try {
        // A request for a model that was retired meanwhile fails as SkyRL's stale ones do.
        if (type !== 'create_model' && this.model?.id !== model) throw new ClawGymError(ErrorCodes.TRAINER_MODEL_STALE, `Model ${model} not loaded (likely stale request from previous server)`);
        f.result = await run();
      } catch (e) {
        f.error = messageOf(e);
      }
      f.done = true;
      for (const w of f.waiters.splice(0)) w();
    });
    return id;
  }

  private async retrieve(id: string): Promise<unknown> {
    const f = this.futures.get(id);
    if (!f) throw new HttpError(404, 'Future not found');
    if (!f.done) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((ok) => f.waiters.push(ok)),
        new Promise<void>((ok) => { timer = setTimeout(ok, this.o.futureWaitMs ?? 60_000); }),
      ]);
      clearTimeout(timer);
      if (!f.done) throw new HttpError(408, 'Timeout waiting for result');
    }
    if (f.error !== undefined) throw new HttpError(400, f.error);
    return f.result;
  }

  /** `asample` from the weights `save_weights_for_sampler` published last, or the base model while the weights are still it. */
  private sample(b: Record<string, any>): { future_id: string; status: string; request_id: string } {
    const engine = this.o.engine;
    if (!engine) throw new HttpError(400, 'this trainer service has no engine to sample with');
    const sp = b.sampling_params ?? {};
    if (sp.max_tokens === undefined || sp.max_tokens === null) throw new HttpError(400, 'max_tokens is currently required');
    if (!(sp.max_tokens > 0)) throw new HttpError(400, 'max_tokens must be a positive number');
    if ((b.base_model == null) === (b.model_path == null)) throw new HttpError(422, "When 'sampling_session_id' is not provided, exactly one of 'base_model' or 'model_path' must be provided");
    if (b.model_path != null) {
      const p = parseTinkerPath(String(b.model_path));
      if (!p || (p.kind !== '' && p.kind !== 'sampler_weights')) throw new HttpError(400, 'model_path must be tinker://model_id/checkpoint_id or tinker://model_id/sampler_weights/checkpoint_id');
      const canonical = `tinker://${p.modelId}/${p.checkpoint}`;
      // The embedded engine samples the trainer's own weights: only the newest published ones are them.
      if (!this.latestSampler || this.latestSampler.path !== canonical) throw new HttpError(400, `Checkpoint ${b.model_path} is not the newest sampler checkpoint; this server samples only ${this.latestSampler?.path ?? 'the base model'}`);
    } else if (this.o.trainer.policyVersion() > 0) {
      throw new HttpError(400, `the base model is no longer what this server's weights are (they were trained ${this.o.trainer.policyVersion()} steps); sample ${this.latestSampler?.path ?? 'a save_weights_for_sampler checkpoint'}`);
    }
    const prompt = Int32Array.from(inputTokens(b.prompt as WireModelInput));
    const stops = Array.isArray(sp.stop) && sp.stop.every((x: unknown) => typeof x === 'number') ? sp.stop as number[] : [];
    const id = String(this.nextId++);
    const f: Future = { type: 'sample', done: false, waiters: [] };
    this.futures.set(id, f);
    // Sampling runs beside training requests (as SkyRL's inference engines do), not in their queue.
    void (async () => {
      try {
        const sequences: WireSampleOutput['sequences'] = [];
        const stopSet = new Set([...engine.chatTemplate.stopIds, ...stops]);
        for (let s = 0; s < (b.num_samples ?? 1); s++) {
          const tokens: number[] = [];
          const logprobs: number[] = [];
          for await (const step of engine.generate({ promptIds: prompt, sampling: { maxTokens: sp.max_tokens, temperature: sp.temperature ?? 1, topP: sp.top_p ?? 1, stopIds: stops, ...(sp.seed != null ? { seed: sp.seed + s } : {}) } })) {
            for (const t of tokensOf(step)) {
              tokens.push(t.tokenId);
              logprobs.push(t.logprob);
            }
          }
          sequences.push({ stop_reason: tokens.length && stopSet.has(tokens[tokens.length - 1]!) ? 'stop' : 'length', tokens, logprobs });
        }
        f.result = { sequences, prompt_logprobs: null } satisfies WireSampleOutput;
      } catch (e) {
        f.error = messageOf(e);
      }
      f.done = true;
      for (const w of f.waiters.splice(0)) w();
    })();
    return { future_id: id, status: 'pending', request_id: id };
  }
}

/** `ForwardBackwardOutput` as SkyRL's JAX backend writes it: per datum logprobs and elementwise loss. */
function passOutput(data: Datum[], logprobs: Float32Array[], loss: string | undefined, total?: number, c: DatumLossConfig = {}): WirePassOutput {
  const t = (xs: ArrayLike<number>) => ({ data: Array.from(xs), dtype: 'float32' as const, shape: [xs.length] });
  return {
    loss_fn_output_type: 'scalar',
    loss_fn_outputs: data.map((d, k) => ({
      logprobs: t(logprobs[k]!),
      ...(loss ? { elementwise_loss: t(elementwise(loss, d, logprobs[k]!, c)) } : {}),
    })),
    metrics: total !== undefined ? { 'loss:sum': total } : {},
  };
}

/** Per-token losses (weighted), for `elementwise_loss`; their sum is the loss. */
function elementwise(loss: string, d: Datum, lp: Float32Array, c: DatumLossConfig): Float32Array {
  return Float32Array.from(lp, (l, i) => {
    const w = d.weights[i]!;
    if (!w) return 0;
    if (loss === 'cross_entropy') return -w * l;
    const r = Math.exp(l - (d.logprobs?.[i] ?? 0));
    const a = d.advantages?.[i] ?? 0;
    if (loss !== 'ppo') return -w * r * a;
    return -w * Math.min(r * a, Math.min(Math.max(r, c.clipLowThreshold ?? 0.8), c.clipHighThreshold ?? 1.2) * a);
  });
}
