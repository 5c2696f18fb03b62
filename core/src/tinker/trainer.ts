import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { AdamParams } from '../contracts/datum';
import type { SupervisedStepOptions, Trainer, TrainerBatch, TrainerProvider, TrainMetrics } from '../contracts/trainer';
import type { AdvantageResult, RolloutTree } from '../contracts/tree';
import type { PublishedWeights } from '../contracts/weights';
import { parseWithSchema } from '../config/validate';
import { ClawGymError, ErrorCodes } from '../errors';
import { AdamOptions } from '../train/adam-options';
import { datumStep } from '../train/datum-step';
import { treesToDatums } from '../train/datums';
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
  /** Adam and its schedule (the client owns it: warm-up, then constant); the embedded trainer's defaults. */
  optimizer: AdamOptions.prefault({}),
  /**
   * Where this machine sees the service's checkpoint folder (`clawgym trainer serve --data`, or a
   * shared file system): published weights are then the local folder an engine here loads
   * (`<dir>/<model_id>/sampler_weights/<name>`) instead of a `tinker://` URI.
   */
  checkpointsDir: z.string().optional(),
  retry: RetrySchema,
});
export type TinkerTrainerOptions = z.output<typeof TinkerTrainerOptions>;

/** What `save` writes into the run's checkpoint folder: where the state is on the service. */
interface SavedState { baseUrl: string; modelId: string; statePath: string; optimizerSteps: number; baseModel: string; loraRank: number }

/**
 * A trainer reached over the Tinker API: each RL step is `forward`, `forward_backward` (ppo, the
 * importance weight folded into the advantages) and `optim_step` on datums (`datumStep`); the
 * weights are published with `save_weights_for_sampler`; checkpoints are `save_weights` on the
 * service plus a note of where, in the run's folder. Resuming creates a model and loads them.
 */
export class TinkerTrainer implements Trainer {
  readonly name = 'tinker';
  private steps = 0;

  private constructor(private readonly http: TinkerHttp, private model: TinkerModel, private readonly o: TinkerTrainerOptions, private readonly seed: number) {}

  static async create(o: TinkerTrainerOptions, seed: number): Promise<TinkerTrainer> {
    const http = new TinkerHttp(o.baseUrl, o.apiKey, o.retry);
    return new TinkerTrainer(http, await TinkerModel.create(http, { baseModel: o.baseModel, loraRank: o.loraRank, seed }), o, seed);
  }

  /** The model's id on the service. */
  get modelId(): string { return this.model.modelId; }

  policyVersion(): number { return this.steps; }

  /** Adam of the next optimiser step: linear warm-up, then constant (as the embedded trainer's). */
  private adam(lr = this.o.optimizer.lr): AdamParams {
    const p = this.o.optimizer;
    return { learningRate: lr * Math.min(1, (this.steps + 1) / Math.max(1, p.warmupSteps)), beta1: p.beta1, beta2: p.beta2, eps: p.eps, weightDecay: p.weightDecay, gradClipNorm: p.gradClip };
  }

  async step(batch: TrainerBatch): Promise<TrainMetrics> {
    const metrics = await datumStep({
      forward: (d) => this.model.forward(d),
      forwardBackward: (d, l, c) => this.model.forwardBackward(d, l, c),
      optimStep: async (adam) => { const r = await this.model.optimStep(adam); this.steps++; return r; },
    }, batch, () => this.adam());
    return { ...metrics, lr: this.adam().learningRate };
  }

  /**
   * One supervised step over the API: every kept generated token once (datums as for RL), the
   * `cross_entropy` loss with weights 1/N (a token mean, as the embedded trainer's), one `optim_step`.
   */
  async supervisedStep(trees: readonly RolloutTree[], options: SupervisedStepOptions = {}): Promise<{ loss: number; tokens: number; gradNorm: number }> {
    const ones: AdvantageResult = { algorithm: 'sft', metrics: {}, advantages: new Map(trees.map((t) => [t.rolloutId, new Map(t.nodes.filter((n) => n.kind === 'generated' && !n.removedBy).map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))])) };
    const d = treesToDatums(trees, ones);
    const scale = d.trainedTokens > 0 ? 1 / d.trainedTokens : 0;
    const data = d.datums.map((x) => ({ modelInput: x.modelInput, targetTokens: x.targetTokens, weights: x.weights.map((w) => w * scale) }));
    const { loss } = await this.model.forwardBackward(data, 'cross_entropy');
    const { gradNorm } = await this.model.optimStep(this.adam(options.lr));
    this.steps++;
    return { loss: loss ?? 0, tokens: d.trainedTokens, gradNorm };
  }

  async publishWeights(): Promise<PublishedWeights> {
    const name = `step-${this.steps}`;
    const uri = await this.model.saveForSampler(name);
    const p = parseTinkerPath(uri);
    const path = this.o.checkpointsDir && p ? join(this.o.checkpointsDir, p.modelId, 'sampler_weights', p.checkpoint) : uri;
    return { path, version: this.steps, kind: this.o.loraRank > 0 ? 'lora' : 'full' };
  }

  async save(dir: string): Promise<void> {
    const statePath = await this.model.saveState(`state-${this.steps}`);
    const saved: SavedState = { baseUrl: this.o.baseUrl, modelId: this.model.modelId, statePath, optimizerSteps: this.steps, baseModel: this.o.baseModel, loraRank: this.o.loraRank };
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
    this.model = await TinkerModel.create(this.http, { baseModel: this.o.baseModel, loraRank: this.o.loraRank, seed: this.seed });
    await this.model.loadState(saved.statePath, !options.weightsOnly);
    this.steps = options.weightsOnly ? 0 : saved.optimizerSteps;
  }
}

export const tinkerTrainerProvider: TrainerProvider = {
  name: 'tinker',
  async create(options, ctx) {
    return TinkerTrainer.create(parseWithSchema(TinkerTrainerOptions, options, 'options of trainer "tinker"'), ctx.seed);
  },
};
