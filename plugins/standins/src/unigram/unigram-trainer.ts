import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, datumStep, datumTokenLoss, ErrorCodes, type AdamOptions, type AdamParams, type Datum, type DatumLoss, type DatumLossConfig, type DatumPassResult, type DatumTrainer, type LossReduction, type Trainer, type TrainerBatch, type TrainMetrics, type z } from '@clawgym/core';
import { loadUnigramWeights, logSumExp, saveUnigramWeights } from './unigram-weights';

/**
 * The Tinker operations on a unigram policy: log π(token) = logits[token] − logsumexp(logits),
 * whatever came before it. Tiny (one float per token id of a real vocabulary, e.g. Qwen3's
 * 151,669), so a stand-in trainer can take the datums a real model's rollouts make — prompts of
 * tens of thousands of tokens — and compute their losses and gradients exactly, on a CPU.
 * Refuses what a real model's trainer cannot run: a token id outside the vocabulary (an
 * embedding lookup out of range) and inputs, targets and weights of different lengths.
 */
export class UnigramDatumTrainer implements DatumTrainer {
  reduction: LossReduction = 'sum';
  version = 0;
  private grad: Float64Array;
  private accumulated = 0;
  /** Adam's moments and step count. */
  m: Float32Array;
  v: Float32Array;
  t = 0;

  constructor(public logits: Float32Array) {
    this.grad = new Float64Array(logits.length);
    this.m = new Float32Array(logits.length);
    this.v = new Float32Array(logits.length);
  }

  private check(d: Datum, k: number): void {
    const n = d.modelInput.length;
    if (d.targetTokens.length !== n || d.weights.length !== n) {
      throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `datum ${k} has ${n} input tokens but ${d.targetTokens.length} targets and ${d.weights.length} weights`, { hint: 'target_tokens and weights need one entry per model_input token.' });
    }
    const V = this.logits.length;
    for (const ids of [d.modelInput, d.targetTokens]) {
      for (const id of ids) {
        if (!(id >= 0 && id < V)) throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `datum ${k} holds token id ${id}, outside the model's vocabulary of ${V}`, { hint: 'The datums were tokenized for another model: give the trainer the tokenizer the engine serves.' });
      }
    }
  }

  private logprobs(d: Datum, lse: number): Float32Array {
    return Float32Array.from(d.targetTokens, (id) => this.logits[id]! - lse);
  }

  async forward(data: readonly Datum[]): Promise<DatumPassResult> {
    data.forEach((d, k) => this.check(d, k));
    const lse = logSumExp(this.logits);
    return { logprobs: data.map((d) => this.logprobs(d, lse)) };
  }

  async forwardBackward(data: readonly Datum[], loss: DatumLoss, config: DatumLossConfig = {}): Promise<DatumPassResult> {
    data.forEach((d, k) => this.check(d, k));
    const lse = logSumExp(this.logits);
    const weightOf = (d: Datum) => d.weights.reduce((a, w) => a + w, 0);
    const callWeight = data.reduce((a, d) => a + weightOf(d), 0);
    this.accumulated += data.length;
    let total = 0;
    // Σ g over all trained tokens: d/dlogits of Σ g·logπ(target) is g·onehot(target) − (Σ g)·softmax.
    let sumG = 0;
    const out = data.map((d) => {
      // sum: 1; token_mean: over the call's Σ weight; sequence_mean: over the datum's (the mean over datums at optimStep).
      const scale = this.reduction === 'sum' ? 1 : 1 / Math.max(this.reduction === 'token_mean' ? callWeight : weightOf(d), 1e-9);
      const lp = this.logprobs(d, lse);
      for (let i = 0; i < lp.length; i++) {
        const w = d.weights[i]!;
        if (w === 0) continue;
        const { value, dlogp } = datumTokenLoss(loss, lp[i]!, d.logprobs?.[i] ?? 0, d.advantages?.[i] ?? 0, config);
        total += scale * w * value;
        const g = scale * w * dlogp;
        this.grad[d.targetTokens[i]!]! += g;
        sumG += g;
      }
      return lp;
    });
    if (sumG !== 0) for (let v = 0; v < this.logits.length; v++) this.grad[v]! -= sumG * Math.exp(this.logits[v]! - lse);
    return { logprobs: out, loss: total };
  }

  async optimStep(adam: AdamParams): Promise<{ gradNorm: number }> {
    const div = this.reduction === 'sequence_mean' && this.accumulated > 1 ? this.accumulated : 1;
    let norm2 = 0;
    for (let i = 0; i < this.grad.length; i++) { this.grad[i]! /= div; norm2 += this.grad[i]! ** 2; }
    const gradNorm = Math.sqrt(norm2);
    const clip = adam.gradClipNorm && gradNorm > adam.gradClipNorm ? adam.gradClipNorm / gradNorm : 1;
    this.t++;
    const b1 = adam.beta1, b2 = adam.beta2, lr = adam.learningRate;
    for (let i = 0; i < this.logits.length; i++) {
      const g = this.grad[i]! * clip;
      this.m[i] = b1 * this.m[i]! + (1 - b1) * g;
      this.v[i] = b2 * this.v[i]! + (1 - b2) * g * g;
      const step = (this.m[i]! / (1 - b1 ** this.t)) / (Math.sqrt(this.v[i]! / (1 - b2 ** this.t)) + adam.eps);
      this.logits[i] = this.logits[i]! - lr * (step + adam.weightDecay * this.logits[i]!);
    }
    this.grad.fill(0);
    this.accumulated = 0;
    this.version++;
    return { gradNorm };
  }
}

/**
 * The unigram policy as a trainer (`trainer: { use: 'unigram', options: { tokenizer } }`): what
 * `clawgym trainer serve --tokenizer` serves, so a run whose engine speaks a real model's
 * vocabulary (prompts rendered by its own tokenizer and chat template) trains end to end without
 * the model. Checkpoints hold the logits and Adam's state; the sampler's folder is what
 * `engine serve --tokenizer` loads.
 */
export class UnigramTrainer implements Trainer {
  readonly name = 'unigram';
  readonly datums: UnigramDatumTrainer;

  constructor(vocabSize: number, private readonly optimizer: z.output<typeof AdamOptions>) {
    this.datums = new UnigramDatumTrainer(new Float32Array(vocabSize));
  }

  policyVersion(): number { return this.datums.version; }

  async step(batch: TrainerBatch): Promise<TrainMetrics> {
    const o = this.optimizer;
    const warm = o.warmupSteps > 0 ? Math.min(1, (this.datums.t + 1) / o.warmupSteps) : 1;
    return datumStep(this.datums, batch, () => ({ learningRate: o.lr * warm, beta1: o.beta1, beta2: o.beta2, eps: o.eps, weightDecay: o.weightDecay, gradClipNorm: o.gradClip }));
  }

  async save(dir: string): Promise<void> {
    const d = this.datums;
    await saveUnigramWeights(dir, d.logits, { adam_m: d.m, adam_v: d.v });
    await writeFile(join(dir, 'trainer-state.json'), `${JSON.stringify({ version: d.version, adamSteps: d.t })}\n`);
  }

  async load(dir: string, options: { weightsOnly?: boolean } = {}): Promise<void> {
    const d = this.datums;
    const { logits, extra } = await loadUnigramWeights(dir, d.logits.length, ['adam_m', 'adam_v']);
    d.logits = logits;
    if (options.weightsOnly || !extra.adam_m || !extra.adam_v) {
      d.m.fill(0); d.v.fill(0); d.t = 0; d.version = 0;
      return;
    }
    const state = JSON.parse(await readFile(join(dir, 'trainer-state.json'), 'utf8')) as { version: number; adamSteps: number };
    d.m = extra.adam_m; d.v = extra.adam_v; d.t = state.adamSteps; d.version = state.version;
  }
}
