import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, clippedTisLoss, ErrorCodes, packTree, type AdamParams, type DatumTrainer, type PublishedWeights, type RolloutTree, type SupervisedStepOptions, type Trainer, type TrainerBatch, type TrainMetrics } from '@clawgym/core';
import { GradientWorker } from './gradient-worker';
import { samplingRows, tokenLogprobs, tokenSampling, treeGradients, type GradientJob } from './gradients';
import { parameterShapes, zerosLike, type ModelConfig, type Params } from './model';
import type { SharedPolicy } from './policy';
import { EmbeddedDatumTrainer } from './datum-trainer';
import { loadSafetensors, saveSafetensors } from './safetensors';
import { publishPolicy } from './weights';

/** Where the embedded trainer computes its RL steps. */
export interface TrainerThreading {
  /**
   * Compute each RL step's forward and backward passes in a worker thread (the update is still
   * applied here), so that this thread keeps serving rollouts while a step runs: what the
   * asynchronous loop overlaps. Default off for a trainer made directly; the plugin turns it on.
   */
  worker?: boolean;
}

/** Optimiser settings of the embedded trainer. */
export interface OptimizerConfig {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Clip the global gradient norm to this (0: no clipping). */
  gradClip: number;
  /** Linear warm-up steps, then constant. */
  warmupSteps: number;
  /** The value head's lr as a multiple of lr (the plugin's `optimizer.valueLrScale` defaults to 30; unset here means 1). */
  valueLrScale?: number;
}

/**
 * The embedded trainer: exact forward/backward of the shared policy on tree-packed batches
 * (each token attends to its ancestors only, every generated token is trained once), the
 * policy loss the batch carries (core's clipped ratio with the truncated importance weight by
 * default), PPO's value loss, AdamW with gradient
 * clipping and warm-up, and checkpoints as safetensors plus a JSON config.
 */
export class EmbeddedTrainer implements Trainer {
  readonly name = 'embedded';
  private m: Params;
  private v: Params;
  private t = 0;
  /** The Tinker operations on datums over the same weights and optimiser (`clawgym trainer serve`). */
  readonly datums: DatumTrainer & EmbeddedDatumTrainer;

  /** Where {@link publishWeights} writes a folder per version (unset: nothing is published). */
  publishDir?: string;
  /** Where RL steps' gradients are computed when {@link TrainerThreading.worker} is on. */
  private readonly worker?: GradientWorker;

  constructor(private readonly policy: SharedPolicy, private readonly opt: OptimizerConfig, threading: TrainerThreading = {}) {
    if (threading.worker) this.worker = new GradientWorker();
    this.m = zerosLike(policy.model.params);
    this.v = zerosLike(policy.model.params);
    this.datums = new EmbeddedDatumTrainer(policy, (grads, adam) => this.applyAdam(grads, adam));
  }

  policyVersion(): number {
    return this.policy.version;
  }

  private forwardTree(tree: RolloutTree, batch?: TrainerBatch) {
    const adv = batch?.advantages ?? { algorithm: '', advantages: new Map([[tree.rolloutId, new Map(tree.nodes.filter((n) => n.kind === 'generated').map((n) => [n.id, new Float32Array(n.tokens.length)]))]]), metrics: {} };
    const packed = packTree(tree, adv);
    const fwd = this.policy.model.forward(packed.tokens, packed.parents, packed.positions);
    return { packed, fwd };
  }

  /** Log-probabilities of every generated token under the current weights (the step recomputes its own; tests compare these with the engine's). */
  async logprobs(trees: readonly RolloutTree[]): Promise<Map<string, Map<number, Float32Array>>> {
    const V = this.policy.config.vocabSize;
    const out = new Map<string, Map<number, Float32Array>>();
    for (const tree of trees) {
      const { packed, fwd } = this.forwardTree(tree);
      const lp = tokenLogprobs(fwd, packed.tokens, packed.parents, V);
      const sampling = tokenSampling(tree, packed.nodeOffsets, packed.tokens.length);
      if (sampling) samplingRows(fwd, packed.tokens, packed.parents, V, sampling, lp);
      out.set(tree.rolloutId, splitByNode(tree, lp, packed.nodeOffsets));
    }
    return out;
  }

  /** V(s_t) for every generated token: the value head read at the token's parent position. */
  async values(trees: readonly RolloutTree[]): Promise<Map<string, Map<number, Float32Array>>> {
    const out = new Map<string, Map<number, Float32Array>>();
    for (const tree of trees) {
      const { packed, fwd } = this.forwardTree(tree);
      const vals = new Float32Array(packed.tokens.length);
      for (let i = 0; i < vals.length; i++) vals[i] = packed.parents[i]! >= 0 ? fwd.values![packed.parents[i]!]! : 0;
      out.set(tree.rolloutId, splitByNode(tree, vals, packed.nodeOffsets));
    }
    return out;
  }

  async step(batch: TrainerBatch): Promise<TrainMetrics> {
    const epochs = Math.max(1, Math.floor(batch.loss.epochs ?? 1));
    // The policy at the start of the step, per tree: every epoch's ratio is clipped against it.
    const logpOld = new Map<string, Float32Array>();
    let first: TrainMetrics | undefined;
    let last!: TrainMetrics;
    for (let e = 0; e < epochs; e++) {
      last = await this.epoch(batch, logpOld);
      first ??= last;
    }
    // Mismatch is read at the first epoch (same weights as the engine's); clipping at the last.
    return { ...last, loss: first!.loss, mismatchAbsLogp: first!.mismatchAbsLogp, mismatchKl: first!.mismatchKl, ...(epochs > 1 ? { epochs } : {}) };
  }

  private async epoch(batch: TrainerBatch, logpOld: Map<string, Float32Array>): Promise<TrainMetrics> {
    const { grads, metrics } = await this.gradientsOffThread(batch, logpOld) ?? this.gradients(batch, logpOld);
    // The update itself stays in this thread, between two callbacks: an engine sharing these
    // weights samples from the old ones or the new ones, never from half of each.
    const gradNorm = this.update(grads);
    this.policy.version++;
    return { ...metrics, gradNorm, lr: this.lr() };
  }

  /**
   * The gradient of the batch's loss at the current weights (clipped against `logpOld`, filled
   * with the current logprobs where empty), without applying it: the reference the datum path
   * (`datums`) is checked against.
   */
  gradients(batch: TrainerBatch, logpOld: Map<string, Float32Array> = new Map()): { grads: Params; metrics: TrainMetrics } {
    return treeGradients(this.policy.model, gradientJob(batch), logpOld, batch.policyLoss);
  }

  /**
   * {@link gradients} computed by the worker thread on a copy of the current weights (the same
   * function, so the same floats), while this thread goes on serving; undefined where the worker
   * is off or cannot compute this batch: its loss is not core's `clipped-tis` (a plugin's loss
   * lives in this thread) or the policy's kernels are not the `cpu` kernels (the worker has those).
   */
  private async gradientsOffThread(batch: TrainerBatch, logpOld: Map<string, Float32Array>): Promise<{ grads: Params; metrics: TrainMetrics } | undefined> {
    if (!this.worker || batch.policyLoss !== clippedTisLoss || this.policy.model.kernels.name !== 'cpu') return undefined;
    const r = await this.worker.gradients(this.policy.config, this.policy.model.params, gradientJob(batch), logpOld);
    for (const [id, lp] of r.logpOld) if (!logpOld.has(id)) logpOld.set(id, lp);
    return r;
  }

  /** Stop the worker thread, if one was started (it never keeps the process alive). */
  async close(): Promise<void> {
    await this.worker?.close();
  }

  /** Cross-entropy on the generated tokens of trees (supervised cold start); returns the mean loss. */
  async supervisedStep(trees: readonly RolloutTree[], options: SupervisedStepOptions = {}): Promise<{ loss: number; tokens: number; gradNorm: number }> {
    const model = this.policy.model;
    const V = this.policy.config.vocabSize;
    const grads = zerosLike(model.params);
    const ones = { algorithm: 'sft', advantages: new Map(trees.map((t) => [t.rolloutId, new Map(t.nodes.filter((n) => n.kind === 'generated' && !n.removedBy).map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))])), metrics: {} };
    let total = 0;
    for (const t of trees) for (const a of ones.advantages.get(t.rolloutId)!.values()) total += a.length;
    let loss = 0;
    for (const tree of trees) {
      const packed = packTree(tree, ones);
      const fwd = model.forward(packed.tokens, packed.parents, packed.positions);
      const probs = new Float32Array(fwd.T * V);
      const lp = tokenLogprobs(fwd, packed.tokens, packed.parents, V, probs);
      const dlogits = new Float32Array(fwd.T * V);
      for (let i = 0; i < packed.tokens.length; i++) {
        const p = packed.parents[i]!;
        if (!packed.lossMask[i] || p < 0) continue;
        loss -= lp[i]! / total;
        // d(−logp)/dlogits[p] = softmax − onehot
        for (let v = 0; v < V; v++) dlogits[p * V + v] = dlogits[p * V + v]! + probs[p * V + v]! / total;
        dlogits[p * V + packed.tokens[i]!] = dlogits[p * V + packed.tokens[i]!]! - 1 / total;
      }
      model.backward(fwd, dlogits, grads);
    }
    const gradNorm = this.update(grads, options.lr);
    this.policy.version++;
    return { loss, tokens: total, gradNorm };
  }

  private lr(base = this.opt.lr): number {
    return base * Math.min(1, (this.t + 1) / Math.max(1, this.opt.warmupSteps));
  }

  /** Clip the global norm, then one AdamW step at the configured lr (with warm-up). Returns the norm before clipping. */
  private update(grads: Params, baseLr = this.opt.lr): number {
    const o = this.opt;
    return this.applyAdam(grads, { learningRate: this.lr(baseLr), beta1: o.beta1, beta2: o.beta2, eps: o.eps, weightDecay: o.weightDecay, gradClipNorm: o.gradClip });
  }

  /**
   * Clip the global norm, then one AdamW step with exactly these settings (the Tinker API's
   * `optim_step`: the caller owns the schedule). Returns the norm before clipping.
   */
  applyAdam(grads: Params, adam: AdamParams): number {
    let sq = 0;
    for (const g of grads.values()) for (let i = 0; i < g.length; i++) sq += g[i]! * g[i]!;
    const norm = Math.sqrt(sq);
    const clip = adam.gradClipNorm ?? 0;
    const scale = clip > 0 && norm > clip ? clip / norm : 1;
    const lr = adam.learningRate;
    this.t++;
    const K = this.policy.model.kernels;
    for (const [name, p] of this.policy.model.params) {
      const g = grads.get(name)!;
      if (scale !== 1) for (let i = 0; i < g.length; i++) g[i] = g[i]! * scale;
      // No weight decay on gains, biases and embeddings' positions.
      const decay = /\.(g|b|b1|b2|bo)$|^value\.b$/.test(name) ? 0 : adam.weightDecay;
      const scaled = name.startsWith('value.') ? lr * (this.opt.valueLrScale ?? 1) : lr;
      K.adamw(p, g, this.m.get(name)!, this.v.get(name)!, this.t, scaled, adam.beta1, adam.beta2, adam.eps, decay);
    }
    return norm;
  }

  /**
   * The current weights for engines in other processes (`clawgym engine serve`, vLLM, SGLang):
   * `<publishDir>/v<version>/`. Engines sharing this trainer's weights skip the load.
   */
  async publishWeights(): Promise<PublishedWeights | undefined> {
    return this.publishDir ? publishPolicy(this.policy, this.publishDir) : undefined;
  }

  async save(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    const tensors = (params: Params) => [...params].map(([name, data]) => ({ name, shape: [data.length], data }));
    const shapes = new Map(parameterShapes(this.policy.config));
    await saveSafetensors(join(dir, 'model.safetensors'), [...this.policy.model.params].map(([name, data]) => ({ name, shape: shapes.get(name)!, data })), { format: 'pt', clawgym: 'embedded-transformer' });
    await saveSafetensors(join(dir, 'optimizer.safetensors'), [...tensors(prefix(this.m, 'm.')), ...tensors(prefix(this.v, 'v.'))]);
    await writeFile(join(dir, 'config.json'), `${JSON.stringify({ model: this.policy.config, optimizer: this.opt, step: this.t, policyVersion: this.policy.version }, null, 2)}\n`);
  }

  async load(dir: string, options: { weightsOnly?: boolean } = {}): Promise<void> {
    this.datums.clear();
    const metaText = await readFile(join(dir, 'config.json'), 'utf8').catch(() => {
      throw new ClawGymError(ErrorCodes.CHECKPOINT_MISSING, `no checkpoint at ${dir} (expected config.json and model.safetensors there)`, { hint: `Make one with \`clawgym sft --fresh --out ${dir}\`, or fix the engine's checkpoint option.` });
    });
    const meta = JSON.parse(metaText) as { model: ModelConfig; step: number; policyVersion: number };
    const { tensors } = await loadSafetensors(join(dir, 'model.safetensors'));
    const d = this.policy.model.config.dModel;
    for (const [name, p] of this.policy.model.params) {
      const t = tensors.get(name);
      if (name === 'pos_emb' && t && options.weightsOnly && t.data.length % d === 0 && t.data.length < p.length) {
        // A model with a longer context starts from one with a shorter one: the old model read
        // every position past its context as its last, so the new positions start as that one's
        // embedding and the longer model computes what the shorter one did.
        p.set(t.data);
        for (let at = t.data.length; at < p.length; at += d) p.set(t.data.subarray(t.data.length - d), at);
        continue;
      }
      if (!t || t.data.length !== p.length) throw new ClawGymError(ErrorCodes.CHECKPOINT_MISMATCH, `checkpoint ${dir} does not fit this model: tensor ${name} ${t ? `has ${t.data.length} values, expected ${p.length}` : 'is missing'}`, { hint: 'Give the engine the model options the checkpoint was made with (its config.json lists them), or train a new one.' });
      p.set(t.data);
    }
    const opt = options.weightsOnly ? undefined : await loadSafetensors(join(dir, 'optimizer.safetensors')).catch(() => undefined);
    for (const [name, m] of this.m) m.set(opt?.tensors.get(`m.${name}`)?.data ?? new Float32Array(m.length));
    for (const [name, v] of this.v) v.set(opt?.tensors.get(`v.${name}`)?.data ?? new Float32Array(v.length));
    // Without optimiser state (a model to start from) the step counter restarts with Adam: warm-up again.
    this.t = opt ? meta.step : 0;
    this.policy.version = opt ? meta.policyVersion : 0;
  }
}

/** The plain-data job of an RL batch: its trained trees packed, with their sampling settings. */
function gradientJob(batch: TrainerBatch): GradientJob {
  const trained = batch.trees.filter((t) => batch.advantages.advantages.has(t.rolloutId));
  let totalTokens = 0;
  for (const t of trained) for (const a of batch.advantages.advantages.get(t.rolloutId)!.values()) totalTokens += a.length;
  return {
    totalTokens, loss: batch.loss,
    trees: trained.map((tree) => {
      const packed = packTree(tree, batch.advantages);
      const sampling = tokenSampling(tree, packed.nodeOffsets, packed.tokens.length);
      return { packed, ...(sampling ? { sampling } : {}) };
    }),
  };
}

function prefix(params: Params, p: string): Params {
  return new Map([...params].map(([k, v]) => [`${p}${k}`, v]));
}


/** Cut a packed per-token array back into per-node arrays, for the generated nodes that were packed. */
function splitByNode(tree: RolloutTree, values: Float32Array, offsets: Int32Array): Map<number, Float32Array> {
  const out = new Map<number, Float32Array>();
  for (const n of tree.nodes) {
    const at = offsets[n.id]!;
    if (n.kind === 'generated' && at >= 0) out.set(n.id, values.slice(at, at + n.tokens.length));
  }
  return out;
}
