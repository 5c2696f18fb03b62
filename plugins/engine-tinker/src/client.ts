import { ClawGymError, ErrorCodes, type AdamParams, type Datum, type DatumLoss, type DatumLossConfig, type DatumPassResult, type DatumTrainer } from '@clawgym/core';
import { GRAD_NORM_KEYS, LOSS_SUM_KEYS, metricOf } from './backends';
import { serverFeatures, type ServerFeatures } from './features';
import { HttpFailure, transient, type TinkerHttp } from './http';
import { encodeAdam, encodeDatum, encodeLossConfig, type WireFuture, type WirePassOutput } from './wire';

/** SkyRL's refusals of a second model (skyrl/backends/skyrl_train_backend.py `create_model`, workers/worker.py). */
const HELD = /already has a 'policy' model|register_adapter is not implemented|Cannot register an additional LoRA adapter|LoRA signature mismatch/;

/** Whether an error is the service's 409 for a checkpoint name it already has (a retried save). */
export const alreadyExists = (e: unknown) => e instanceof ClawGymError && /HTTP 409: Checkpoint .* already exists/.test(e.message);

/**
 * One model of a Tinker service: its training operations as {@link DatumTrainer}, each request
 * with a `seq_id` (so a retried request is answered from the first one's future, never applied
 * twice), awaited through `retrieve_future`.
 */
export class TinkerModel implements DatumTrainer {
  /** The `seq_id` of the next training request; requests of one model count up from 1. */
  seq = 1;

  constructor(readonly http: TinkerHttp, readonly modelId: string, readonly sessionId?: string, readonly features: ServerFeatures = { seqId: true, why: 'assumed', loadWithoutOptimizer: true }) {}

  /**
   * Start a session and create a model on it (`create_session`, `create_model`, then its future),
   * after learning what the service takes (`features.ts`). `model_seq_id` numbers the models of a
   * session from 0, as the Tinker SDK does; hosted Tinker requires it
   * (thinking-machines-lab/tinker@d595dc2 src/tinker/types/create_model_request.py:15), SkyRL ignores it.
   */
  static async create(http: TinkerHttp, o: { baseModel: string; loraRank: number; seed?: number; backend?: string }): Promise<TinkerModel> {
    const features = await serverFeatures(http, o.backend ?? 'skyrl-fsdp');
    const { session_id } = await http.post<{ session_id: string }>('/api/v1/create_session', { tags: ['clawgym'], user_metadata: {}, sdk_version: 'clawgym', type: 'create_session' });
    const created = await http.post<{ model_id: string; request_id: string }>('/api/v1/create_model', {
      session_id, model_seq_id: 0, base_model: o.baseModel, lora_config: { rank: o.loraRank, ...(o.seed !== undefined ? { seed: o.seed } : {}) }, type: 'create_model',
    });
    try {
      await http.result({ future_id: created.request_id, status: 'pending', request_id: created.request_id }, 'create_model');
    } catch (e) {
      if (e instanceof ClawGymError && HELD.test(e.message)) throw await TinkerModel.held(http, created.model_id, e);
      throw e;
    }
    return new TinkerModel(http, created.model_id, session_id, features);
  }

  /** The error for a server that holds another model (SkyRL FSDP trains one per server), naming the models it knows. */
  private static async held(http: TinkerHttp, refused: string, cause: ClawGymError): Promise<ClawGymError> {
    const runs = await http.get<{ training_runs?: { training_run_id: string; base_model: string; last_request_time?: string }[] }>('/api/v1/training_runs?limit=100')
      .then((r) => (r.training_runs ?? []).filter((t) => t.training_run_id !== refused)).catch(() => []);
    const named = runs.slice(-5).map((t) => `${t.training_run_id} (${t.base_model}${t.last_request_time ? `, created ${t.last_request_time}` : ''})`).join(', ');
    return new ClawGymError(ErrorCodes.TRAINER_SERVICE, `Tinker service at ${http.baseUrl} already holds a model and takes no second one${named ? `; models it knows: ${named}` : ''}`, {
      cause,
      hint: `SkyRL's FSDP backend trains one model per server. If it is a killed run of this config, \`clawgym run --resume\` unloads it itself; otherwise unload it (curl -X POST ${http.baseUrl}/api/v1/unload_model -H 'content-type: application/json' -d '{"model_id":"<id>"}') or restart the server.`,
    });
  }

  /** `unload_model` and its future: the server frees the model (SkyRL ignores an unload of a model it no longer holds). */
  static async unload(http: TinkerHttp, modelId: string): Promise<void> {
    const r = await http.post<{ request_id: string }>('/api/v1/unload_model', { model_id: modelId, type: 'unload_model' });
    await http.result({ future_id: r.request_id, status: 'pending', request_id: r.request_id }, 'unload_model');
  }

  /**
   * One `session_heartbeat`, as the Tinker SDK sends it every 10 s (`_session_heartbeat` in
   * `lib/internal_client_holder.py` @ e9a95e23: body `{session_id, type: "session_heartbeat"}`,
   * one try, 10 s limit; the next beat is the retry). SkyRL unloads the models of a session whose
   * heartbeats stopped; hosted Tinker warns that such sessions are terminated.
   */
  async heartbeat(): Promise<void> {
    if (this.sessionId) await this.http.call('POST', '/api/v1/session_heartbeat', { session_id: this.sessionId, type: 'session_heartbeat' }, 10_000, 1);
  }

  /**
   * One training request and its future. With `seq_id` (a server that deduplicates by it) a lost
   * answer is retried; without, a request that changes the model (`once`) is sent once, and a
   * failure in transit stops the run (a retry could apply it twice).
   */
  private async op<T>(route: string, body: Record<string, unknown>, withSeq = true, once = false): Promise<T> {
    const seq = withSeq && this.features.seqId;
    const payload = { model_id: this.modelId, ...body, ...(seq ? { seq_id: this.seq++ } : {}) };
    const what = route.slice('/api/v1/'.length);
    const future = once && !seq ? await this.sendOnce(route, what, payload) : await this.http.post<WireFuture>(route, payload);
    return this.http.result<T>(future, what);
  }

  private async sendOnce(route: string, what: string, payload: Record<string, unknown>): Promise<WireFuture> {
    try {
      return await this.http.call<WireFuture>('POST', route, payload, undefined, 1);
    } catch (e) {
      const f = e instanceof ClawGymError ? e.cause : undefined;
      if (!(f instanceof HttpFailure) || (f.status !== undefined && !transient(f.status))) throw e;
      throw new ClawGymError(ErrorCodes.TRAINER_NOT_IDEMPOTENT, `Tinker service at ${this.http.baseUrl}: ${what} of model ${this.modelId} failed in transit (${f.message}) and was not retried: ${this.features.why}, so a retry could apply it twice`, {
        cause: e,
        hint: 'The service may or may not have applied it. Run a SkyRL that deduplicates by seq_id (main at a9564572 or later) to have such calls retried; otherwise restart the service if needed and `clawgym run --resume` from the last checkpoint.',
      });
    }
  }

  private static read(out: WirePassOutput): DatumPassResult {
    const logprobs = out.loss_fn_outputs.map((o) => Float32Array.from(o.logprobs?.data ?? []));
    const sum = metricOf(out.metrics, LOSS_SUM_KEYS);
    const loss = sum !== undefined ? sum : out.loss_fn_outputs.reduce((s, o) => s + (o.elementwise_loss?.data ?? []).reduce((a, b) => a + b, 0), 0);
    return { logprobs, loss };
  }

  async forward(data: readonly Datum[]): Promise<DatumPassResult> {
    // `cross_entropy` is what the SDK sends for a plain forward; nothing is accumulated.
    return TinkerModel.read(await this.op<WirePassOutput>('/api/v1/forward', { forward_input: { data: data.map(encodeDatum), loss_fn: 'cross_entropy', loss_fn_config: null } }));
  }

  async forwardBackward(data: readonly Datum[], loss: DatumLoss, config?: DatumLossConfig): Promise<DatumPassResult> {
    return TinkerModel.read(await this.op<WirePassOutput>('/api/v1/forward_backward', { forward_backward_input: { data: data.map(encodeDatum), loss_fn: loss, loss_fn_config: encodeLossConfig(loss, config) } }, true, true));
  }

  async optimStep(adam: AdamParams): Promise<{ gradNorm: number }> {
    const out = await this.op<{ metrics?: Record<string, number> | null }>('/api/v1/optim_step', { adam_params: encodeAdam(adam) }, true, true);
    // SkyRL names it `skyrl.ai/grad_norm` (FSDP, Megatron and JAX alike).
    return { gradNorm: metricOf(out.metrics, GRAD_NORM_KEYS) ?? Number.NaN };
  }

  /** `save_weights_for_sampler` under `name`; resolves to the `tinker://` path a sampler loads. */
  async saveForSampler(name: string): Promise<string> {
    try {
      const out = await this.op<{ path: string | null }>('/api/v1/save_weights_for_sampler', { path: name }, false);
      return out.path ?? `tinker://${this.modelId}/${name}`;
    } catch (e) {
      // A retried save whose first try went through: the checkpoint is ours, done or still being written.
      if (alreadyExists(e)) { await this.completed('sampler', name); return `tinker://${this.modelId}/${name}`; }
      throw e;
    }
  }

  /** `save_weights` (weights and optimiser state) under `name`; resolves to its `tinker://…/weights/…` path. */
  async saveState(name: string): Promise<string> {
    try {
      return (await this.op<{ path: string }>('/api/v1/save_weights', { path: name }, false)).path;
    } catch (e) {
      if (alreadyExists(e)) { await this.completed('training', name); return `tinker://${this.modelId}/weights/${name}`; }
      throw e;
    }
  }

  /**
   * Wait until the service lists checkpoint `name` as completed. The 409 of a retried save comes
   * as soon as the first try was accepted, while it may still be writing (SkyRL answers it for a
   * pending checkpoint too), so the path is not usable until the listing has it.
   */
  private async completed(type: 'training' | 'sampler', name: string): Promise<void> {
    const { futureTimeoutMs } = this.http.retry;
    const deadline = Date.now() + futureTimeoutMs;
    for (let wait = 100; ; wait = Math.min(2000, wait * 2)) {
      const { checkpoints } = await this.http.get<{ checkpoints: { checkpoint_id: string; checkpoint_type: string }[] }>(`/api/v1/training_runs/${encodeURIComponent(this.modelId)}/checkpoints`);
      if (checkpoints.some((c) => c.checkpoint_id === name && c.checkpoint_type === type)) return;
      if (Date.now() >= deadline) {
        throw new ClawGymError(ErrorCodes.TRAINER_SERVICE, `Tinker service at ${this.http.baseUrl}: checkpoint '${name}' of model ${this.modelId} was asked for but is not listed as completed after ${Math.round(futureTimeoutMs / 1000)} s`, {
          hint: 'Its save failed or hangs on the service: its log has the details. Rerun with `clawgym run --resume`.',
        });
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  /** `load_weights` (only as a model's first request, as the Tinker service requires). */
  async loadState(path: string, optimizer: boolean): Promise<void> {
    if (!optimizer && !this.features.loadWithoutOptimizer) {
      // skyrl-v0.3.0 drops `optimizer` and loads the checkpoint's Adam state too: refused, not guessed.
      throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `Tinker service at ${this.http.baseUrl} cannot load ${path} without its optimizer state: its load_weights takes no \`optimizer\` flag (as SkyRL skyrl-v0.3.0, which always loads weights and Adam state)`, {
        hint: 'Run a SkyRL whose load_weights takes `optimizer` (main at a9564572 or later) to start from a checkpoint\'s weights alone; resuming a run (`clawgym run --resume`) loads both and works on either.',
      });
    }
    await this.op('/api/v1/load_weights', { path, optimizer }, false);
  }
}
