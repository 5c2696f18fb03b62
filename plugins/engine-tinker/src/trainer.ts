import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseWithSchema, ClawGymError, ErrorCodes, AdamOptions, datumStep, reductionFactors, treesToDatums, type AdamParams, type Datum, type DatumPassResult, type LossReduction, type SupervisedStepOptions, type Trainer, type TrainerBatch, type TrainerProvider, type TrainMetrics, type AdvantageResult, type RolloutTree, type PublishedWeights, type WeightsRouteProblem, z } from '@clawgym/core';
import { pruneSteps, unpackArchive } from './archive';
import { chunkedPass } from './chunks';
import { BACKEND_TRAITS, LOSS_REDUCTIONS, TRAINER_BACKENDS } from './backends';
import { TinkerModel } from './client';
import { defaultRetry, TinkerHttp } from './http';
import { parseTinkerPath } from './wire';

export const RetrySchema = z.strictObject({
  attempts: z.number().int().positive().default(defaultRetry.attempts),
  baseDelayMs: z.number().int().min(0).default(defaultRetry.baseDelayMs),
  maxDelayMs: z.number().int().min(0).default(defaultRetry.maxDelayMs),
  requestTimeoutMs: z.number().int().positive().default(defaultRetry.requestTimeoutMs),
  futureTimeoutMs: z.number().int().positive().default(defaultRetry.futureTimeoutMs),
}).prefault({});

/** `trainer: { use: 'tinker', options }`. */
export const TinkerTrainerOptions = z.strictObject({
  /** The service root, e.g. `http://127.0.0.1:8000` (SkyRL's `python -m skyrl.tinker.api`, or `clawgym trainer serve`). */
  baseUrl: z.url(),
  apiKey: z.string().optional(),
  /** The model the service trains (SkyRL: its `--base-model`, e.g. `Qwen/Qwen3-8B`). */
  baseModel: z.string().default('embedded'),
  /** LoRA rank; 0 trains all weights (SkyRL: full fine-tuning, one model per server). */
  loraRank: z.number().int().min(0).default(32),
  /**
   * The service's backend (`backends.ts`): how it reduces the loss, which Adam fields it applies.
   * SkyRL `--backend fsdp` is `skyrl-fsdp`; hosted Tinker `tinker`.
   */
  backend: z.enum(TRAINER_BACKENDS as [string, ...string[]]).default('skyrl-fsdp'),
  /** The service's loss reduction, when it is not its backend's (a server started with another one). */
  lossReduction: z.enum(LOSS_REDUCTIONS as [string, ...string[]]).optional(),
  /** Adam and its schedule (the client owns it: warm-up, then constant); the embedded trainer's defaults. */
  optimizer: AdamOptions.prefault({}),
  /**
   * Where this machine sees the service's checkpoint folder (`clawgym trainer serve --data`, or a
   * shared file system): each published sampler archive (`<dir>/<model_id>/sampler_weights/<name>.tar.gz`)
   * is unpacked beside itself and that folder is what engines here load.
   */
  checkpointsDir: z.string().optional(),
  /** Without a shared folder: download each sampler archive (the `archive` route) and unpack it here, for engines that read this folder. */
  weightsDir: z.string().optional(),
  /**
   * The temperature the service scores tokens at: SkyRL divides the logits by its
   * `trainer.algorithm.temperature` (set at server start with --backend-config; 1 unless set).
   * A step whose tokens were sampled at another temperature is refused: π_old and the engine's
   * π_rollout would be different distributions, and the importance weights biased.
   */
  temperature: z.number().positive().default(1),
  /**
   * Published versions whose folders stay here (the unpacked sampler archives, and with
   * `weightsDir` the downloaded archives too); older ones are removed as each new one is
   * unpacked. At least 2: a LoRA engine still serves the previous version while it loads the next.
   */
  keepWeights: z.number().int().min(2).default(3),
  /** Seconds between session heartbeats (the Tinker SDK's 10). */
  heartbeatSeconds: z.number().positive().default(10),
  retry: RetrySchema,
});
export type TinkerTrainerOptions = z.output<typeof TinkerTrainerOptions>;

/** What `save` writes into the run's checkpoint folder: where the state is on the service. */
interface SavedState { baseUrl: string; modelId: string; statePath: string; optimizerSteps: number; baseModel: string; loraRank: number }

/** Adam fields an `lr-only` backend fixes at optimizer creation. */
const FIXED_FIELDS = ['beta1', 'beta2', 'eps', 'weightDecay', 'gradClip'] as const;

/**
 * A trainer reached over the Tinker API: each RL step is `forward`, `forward_backward` (ppo, the
 * importance weight and the backend's loss reduction folded into the advantages) and `optim_step`
 * on datums (`datumStep`); the weights are published with `save_weights_for_sampler` (the archive
 * unpacked where an engine reads it); checkpoints are `save_weights` on the service plus a note of
 * where, in the run's folder. The model is created on first use and unloaded by `close`; the
 * session heartbeats meanwhile. A model a killed attempt of this run left on the service
 * (`<runDir>/tinker-model.json`) is unloaded first, so a one-model server takes the new one.
 */
export class TinkerTrainer implements Trainer {
  readonly name = 'tinker';
  private steps = 0;
  private model?: TinkerModel;
  private heartbeat?: NodeJS.Timeout;
  /** Sampler checkpoints published on the service, oldest first (the last `keepWeights` kept). */
  private readonly published: string[] = [];
  /** Whether the service deletes checkpoints (undefined until asked). */
  private deletes: boolean | undefined;
  readonly reduction: LossReduction;

  private constructor(private readonly http: TinkerHttp, private readonly o: TinkerTrainerOptions, private readonly seed: number, private readonly runDir?: string) {
    this.reduction = (o.lossReduction ?? BACKEND_TRAITS[o.backend as keyof typeof BACKEND_TRAITS].reduction) as LossReduction;
  }

  static async create(o: TinkerTrainerOptions, seed: number, runDir?: string): Promise<TinkerTrainer> {
    const http = new TinkerHttp(o.baseUrl, o.apiKey, o.retry);
    await http.get('/api/v1/healthz'); // a service that is not there stops the run now, not at its first step
    return new TinkerTrainer(http, o, seed, runDir);
  }

  /** The model's id on the service (after its first use). */
  get modelId(): string { return this.model?.modelId ?? ''; }

  policyVersion(): number { return this.steps; }

  private get note(): string | undefined { return this.runDir ? join(this.runDir, 'tinker-model.json') : undefined; }

  /** The run's model on the service, created (after unloading a leftover of this run) on first use. */
  private async use(): Promise<TinkerModel> {
    if (this.model) return this.model;
    const note = this.note;
    if (note && existsSync(note)) {
      const left = JSON.parse(await readFile(note, 'utf8')) as { baseUrl: string; modelId: string };
      if (left.baseUrl === this.o.baseUrl) await this.unload(left.modelId);
    }
    this.model = await TinkerModel.create(this.http, { baseModel: this.o.baseModel, loraRank: this.o.loraRank, seed: this.seed, backend: this.o.backend });
    if (note) { await mkdir(this.runDir!, { recursive: true }); await writeFile(note, `${JSON.stringify({ baseUrl: this.o.baseUrl, modelId: this.model.modelId })}\n`); }
    const model = this.model;
    this.heartbeat = setInterval(() => { void model.heartbeat().catch(() => undefined); }, this.o.heartbeatSeconds * 1000);
    this.heartbeat.unref();
    return model;
  }

  /** Unload a model of ours; one the service no longer knows (404) is gone already. */
  private async unload(modelId: string): Promise<void> {
    await TinkerModel.unload(this.http, modelId).catch((e) => { if (!(e instanceof ClawGymError && /HTTP 404/.test(e.message))) throw e; });
  }

  /** Adam of the next optimiser step: linear warm-up, then constant (as the embedded trainer's). */
  private adam(lr = this.o.optimizer.lr): AdamParams {
    const p = this.o.optimizer;
    return { learningRate: lr * Math.min(1, (this.steps + 1) / Math.max(1, p.warmupSteps)), beta1: p.beta1, beta2: p.beta2, eps: p.eps, weightDecay: p.weightDecay, gradClipNorm: p.gradClip };
  }

  async step(batch: TrainerBatch): Promise<TrainMetrics> {
    assertScoringTemperature(batch.trees, this.o.temperature);
    const model = await this.use();
    const metrics = await datumStep({
      forward: (d) => chunkedPass(d, (c) => model.forward(c)),
      forwardBackward: (d, l, c) => this.pass(d, (x) => model.forwardBackward(x, l, c)),
      optimStep: async (adam) => { const r = await model.optimStep(adam); this.steps++; return r; },
    }, batch, () => this.adam(), this.reduction);
    return { ...metrics, lr: this.adam().learningRate };
  }

  /**
   * A `forward_backward` over `data` in the SDK's request chunks where the backend's reduction
   * does not depend on how the datums are split (a sum, or a mean over all accumulated datums);
   * under a per-call `token_mean` (a server started so) one request, as the factors assume.
   */
  private pass(data: readonly Datum[], send: (chunk: readonly Datum[]) => Promise<DatumPassResult>): Promise<DatumPassResult> {
    return this.reduction === 'token_mean' ? send(data) : chunkedPass(data, send);
  }

  /**
   * One supervised step over the API: every kept generated token once (datums as for RL), the
   * token mean of their cross-entropy, one `optim_step`. Under `sum` the weights are 1/N; under
   * `token_mean` 1 (the server divides by N); under `sequence_mean`, where weights cancel within a
   * datum, `importance_sampling` against the current logprobs (ratio 1, gradient −A·∇logp) with
   * A = D·Σw_d/N carries the same gradient.
   */
  async supervisedStep(trees: readonly RolloutTree[], options: SupervisedStepOptions = {}): Promise<{ loss: number; tokens: number; gradNorm: number }> {
    const model = await this.use();
    const ones: AdvantageResult = { algorithm: 'sft', metrics: {}, advantages: new Map(trees.map((t) => [t.rolloutId, new Map(t.nodes.filter((n) => n.kind === 'generated' && !n.removedBy).map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))])) };
    const d = treesToDatums(trees, ones);
    const N = d.trainedTokens;
    let loss: number;
    if (this.reduction === 'sequence_mean') {
      const { logprobs } = await chunkedPass(d.datums, (c) => model.forward(c));
      const factors = reductionFactors(d.datums, 'sequence_mean');
      const data: Datum[] = d.datums.map((x, k) => ({ modelInput: x.modelInput, targetTokens: x.targetTokens, weights: x.weights, logprobs: logprobs[k]!, advantages: x.weights.map((w) => (w && N ? factors[k]! / N : 0)) }));
      await this.pass(data, (c) => model.forwardBackward(c, 'importance_sampling'));
      loss = N ? -d.datums.reduce((s, x, k) => s + x.weights.reduce((a, w, i) => a + w * logprobs[k]![i]!, 0), 0) / N : 0;
    } else {
      const scale = this.reduction === 'token_mean' ? 1 : N > 0 ? 1 / N : 0;
      const data = d.datums.map((x) => ({ modelInput: x.modelInput, targetTokens: x.targetTokens, weights: x.weights.map((w) => w * scale) }));
      loss = (await this.pass(data, (c) => model.forwardBackward(c, 'cross_entropy'))).loss ?? 0;
    }
    const { gradNorm } = await model.optimStep(this.adam(options.lr));
    this.steps++;
    return { loss, tokens: N, gradNorm };
  }

  /**
   * `save_weights_for_sampler`, then where an engine finds the weights: the `tinker://` path for
   * engine "tinker"; with `checkpointsDir` or `weightsDir` the archive unpacked into a folder
   * (SkyRL writes `<model_id>/sampler_weights/<name>.tar.gz`). A folder with `adapter_config.json`
   * is a LoRA adapter, as SkyRL FSDP exports a LoRA run (PEFT's save_pretrained); the folders of
   * versions older than the last `keepWeights` are removed.
   */
  async publishWeights(): Promise<PublishedWeights> {
    const model = await this.use();
    const name = `step-${this.steps}`;
    const uri = await model.saveForSampler(name);
    const p = parseTinkerPath(uri);
    if (p) await this.forgetOlderThan(p.modelId, name);
    const lora = this.o.loraRank > 0 ? 'lora' as const : 'full' as const;
    if (!p || (!this.o.checkpointsDir && !this.o.weightsDir)) return { path: uri, version: this.steps, kind: lora };
    let folder: string;
    if (this.o.checkpointsDir) {
      const at = join(this.o.checkpointsDir, p.modelId, 'sampler_weights');
      folder = await unpackArchive(join(at, `${p.checkpoint}.tar.gz`), join(at, p.checkpoint));
      // The archives there are the service's own (its database lists them): only our folders go.
      await pruneSteps(at, this.o.keepWeights, { archives: false });
    } else {
      const archive = join(this.o.weightsDir!, p.modelId, `${p.checkpoint}.tar.gz`);
      await this.http.download(`/api/v1/training_runs/${encodeURIComponent(p.modelId)}/checkpoints/${encodeURIComponent(p.checkpoint)}/archive`, archive);
      folder = await unpackArchive(archive, join(this.o.weightsDir!, p.modelId, p.checkpoint));
      await pruneSteps(join(this.o.weightsDir!, p.modelId), this.o.keepWeights, { archives: true });
    }
    return { path: folder, version: this.steps, kind: existsSync(join(folder, 'adapter_config.json')) ? 'lora' : 'full' };
  }

  /**
   * Ask the service to delete the sampler checkpoint that falls out of the last `keepWeights`
   * once `name` is published (SkyRL main: `DELETE /api/v1/training_runs/<model>/checkpoints/
   * sampler_weights/<name>`, the row and the archive). A service without the route (skyrl-v0.3.0,
   * `clawgym trainer serve`) answers 404 or 405: it is not asked again, and keeps its archives.
   */
  private async forgetOlderThan(modelId: string, name: string): Promise<void> {
    if (this.published[this.published.length - 1] === name) return; // the same checkpoint again
    this.published.push(name);
    if (this.published.length <= this.o.keepWeights || this.deletes === false) return;
    const old = this.published.shift()!;
    try {
      await this.http.call('DELETE', `/api/v1/training_runs/${encodeURIComponent(modelId)}/checkpoints/sampler_weights/${encodeURIComponent(old)}`, undefined, undefined, 2);
      this.deletes = true;
    } catch (e) {
      // FastAPI's bare "Not Found" (or 405): no such route here. Anything else ("Checkpoint not
      // found": gone already; a busy service) leaves that archive there: tidying never stops a run.
      if (this.deletes === undefined && e instanceof ClawGymError && /HTTP 40[45]/.test(e.message) && !/Checkpoint not found/.test(e.message)) this.deletes = false;
    }
  }

  async save(dir: string): Promise<void> {
    const model = await this.use();
    const statePath = await model.saveState(`state-${this.steps}`);
    const saved: SavedState = { baseUrl: this.o.baseUrl, modelId: model.modelId, statePath, optimizerSteps: this.steps, baseModel: this.o.baseModel, loraRank: this.o.loraRank };
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'tinker.json'), `${JSON.stringify(saved, null, 2)}\n`);
  }

  async load(dir: string, options: { weightsOnly?: boolean } = {}): Promise<void> {
    const text = await readFile(join(dir, 'tinker.json'), 'utf8').catch(() => {
      throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `no Tinker checkpoint note at ${join(dir, 'tinker.json')}`, { hint: 'The run was not trained with trainer "tinker", or its checkpoint folder was removed.' });
    });
    const saved = JSON.parse(text) as SavedState;
    // The Tinker API loads state only as a model's first request: into a new model, whatever the
    // old one did after this checkpoint (a step the killed run applied and did not record) is gone.
    // The old one goes first: a one-model server (SkyRL FSDP) takes no second.
    const current = this.model?.modelId;
    await this.close();
    if (saved.baseUrl === this.o.baseUrl && !options.weightsOnly && saved.modelId !== current) await this.unload(saved.modelId);
    const model = await this.use();
    await model.loadState(saved.statePath, !options.weightsOnly);
    this.steps = options.weightsOnly ? 0 : saved.optimizerSteps;
  }

  /** Stop heartbeating and unload the model, so the service can take the next one. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.published.length = 0; // the next model's checkpoints are its own
    const model = this.model;
    this.model = undefined;
    if (!model) return;
    await this.unload(model.modelId);
    if (this.note) await writeFile(this.note, '{}\n').catch(() => undefined);
  }
}

/**
 * Refuse trees whose trained tokens were sampled at another temperature than the service scores
 * at: there is no per-request temperature in the Tinker API's forward, so π_old would be the
 * service's distribution and π_rollout the engine's, and min(π_old/π_rollout, C) biased.
 */
export function assertScoringTemperature(trees: readonly RolloutTree[], scoredAt: number): void {
  const other = new Set<number>();
  for (const t of trees) for (const n of t.nodes) if (n.kind === 'generated' && !n.removedBy && (n.sampling?.temperature ?? 1) !== scoredAt) other.add(n.sampling?.temperature ?? 1);
  if (!other.size) return;
  const at = [...other].sort((a, b) => a - b);
  throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `the rollouts' tokens were sampled at temperature ${at.join(', ')}, but the trainer service scores them at ${scoredAt} (trainer.options.temperature): the importance weights min(π_old/π_rollout, C) would compare two different distributions`, {
    hint: at.length === 1
      ? `Start SkyRL with --backend-config '{"trainer.algorithm.temperature": ${at[0]}}' and set trainer.options.temperature: ${at[0]}; or have the harnesses sample at ${scoredAt}.`
      : `The harnesses sample at several temperatures (${at.join(', ')}); the service scores at one. Make them sample at one, start SkyRL with --backend-config '{"trainer.algorithm.temperature": T}' and set trainer.options.temperature: T.`,
  });
}

/** Adam fields set in the config that the backend will not apply: refused, with where to set them instead. */
export function ignoredOptimizerFields(raw: Record<string, unknown>, backend: string): string[] {
  if (BACKEND_TRAITS[backend as keyof typeof BACKEND_TRAITS]?.optimizer !== 'lr-only') return [];
  const opt = (raw.optimizer ?? {}) as Record<string, unknown>;
  return FIXED_FIELDS.filter((k) => opt[k] !== undefined);
}

/**
 * Whether an engine can load what this trainer publishes: engine "tinker" samples the service's
 * own `tinker://` paths; every other engine (vLLM, SGLang, the embedded one) loads a folder, which
 * only `checkpointsDir` or `weightsDir` make of the service's sampler archive.
 */
export function tinkerWeightsRoute(options: Record<string, unknown>, engine: { name: string }): WeightsRouteProblem | undefined {
  const folders = ['checkpointsDir', 'weightsDir'].filter((k) => typeof options[k] === 'string' && options[k]);
  if (engine.name === 'tinker' && folders.length) {
    return {
      message: `engine "tinker" samples the weights the service holds (a tinker:// path), but trainer.options.${folders.join(' and ')} make the published weights local folders`,
      hint: `Leave out trainer.options.${folders.join(' and ')} when the engine is "tinker" (docs/scale.md, "Sampling through the same service").`,
    };
  }
  if (engine.name !== 'tinker' && !folders.length) {
    return {
      message: `with neither trainer.options.checkpointsDir nor trainer.options.weightsDir, the tinker trainer publishes tinker://<model>/<checkpoint> paths, which only the service itself can sample; engine "${engine.name}" loads weights from a folder and would be handed that path at the first weight sync`,
      hint: "Sample on the service: engine: { use: 'tinker', options: { baseUrl, baseModel, tokenizer } } (SkyRL samples with its own vLLM engines and syncs them itself; docs/scale.md). " +
        `Or keep engine "${engine.name}" and give it folders: trainer.options.checkpointsDir (where this machine sees the service's --checkpoints-base, on a disk the engine's server reads too) or trainer.options.weightsDir (a folder, readable by the engine's server, where each sampler archive is downloaded and unpacked).`,
    };
  }
  return undefined;
}

export const tinkerTrainerProvider: TrainerProvider = {
  name: 'tinker',
  checkEngine: (options, engine) => tinkerWeightsRoute(options, engine),
  async create(options, ctx) {
    const o = parseWithSchema(TinkerTrainerOptions, options, 'options of trainer "tinker"');
    const ignored = ignoredOptimizerFields(options, o.backend);
    if (ignored.length) {
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `trainer "tinker" (backend ${o.backend}) sets optimizer.${ignored.join(', optimizer.')}, which that backend does not apply: its optim_step takes the learning rate only; betas, eps, weight decay and gradient clipping are fixed when the server starts`, {
        hint: `Remove ${ignored.map((k) => `optimizer.${k}`).join(', ')} from the trainer options and set them on the server (SkyRL: --backend-config with trainer.policy.optimizer_config.{adam_betas, weight_decay, max_grad_norm}); or, if the server is hosted Tinker or SkyRL JAX, set options.backend to 'tinker' or 'skyrl-jax'.`,
      });
    }
    return TinkerTrainer.create(o, ctx.seed, ctx.runDir || undefined);
  },
};
