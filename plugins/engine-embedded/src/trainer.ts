import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes, packTree, valueLoss, type AdamParams, type DatumTrainer, type PublishedWeights, type RolloutTree, type SupervisedStepOptions, type Trainer, type TrainerBatch, type TrainMetrics } from '@clawgym/core';
import { samplingLogprobs } from './engine';
import { parameterShapes, zerosLike, type ForwardResult, type ModelConfig, type Params } from './model';
import type { SharedPolicy } from './policy';
import { EmbeddedDatumTrainer } from './datum-trainer';
import { loadSafetensors, saveSafetensors } from './safetensors';
import { publishPolicy } from './weights';

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

/** Per packed token, the temperature and top-p its call sampled with (see {@link samplingRows}). */
interface TokenSampling { temperature: Float32Array; topP: Float32Array }

/** The sampling settings of each packed token, from its generated node; undefined when all are plain softmax. */
function tokenSampling(tree: RolloutTree, offsets: Int32Array, length: number): TokenSampling | undefined {
  let out: TokenSampling | undefined;
  for (const n of tree.nodes) {
    const at = offsets[n.id]!;
    if (n.kind !== 'generated' || at < 0 || !n.sampling) continue;
    out ??= { temperature: new Float32Array(length).fill(1), topP: new Float32Array(length).fill(1) };
    out.temperature.fill(n.sampling.temperature, at, at + n.tokens.length);
    out.topP.fill(n.sampling.topP, at, at + n.tokens.length);
  }
  return out;
}

/**
 * Where a token was sampled with temperature or top-p, its logprob under that distribution —
 * the engine's own `samplingLogprobs` of its parent row, so the trainer's nucleus is the
 * sampler's — and that distribution (for the gradient: d log q(tok) / d logits = (onehot − q) / T,
 * the nucleus held fixed as the sampler's support). A token outside the recomputed nucleus
 * (weights changed since sampling, in later epochs) joins it, so its logprob stays finite.
 */
function samplingRows(fwd: ForwardResult, tokens: Int32Array, parents: Int32Array, V: number, s: TokenSampling, lp: Float32Array): Map<number, { q: Float32Array; invT: number }> {
  const rows = new Map<number, { q: Float32Array; invT: number }>();
  for (let i = 0; i < tokens.length; i++) {
    const p = parents[i]!;
    const T = s.temperature[i]!;
    const P = s.topP[i]!;
    if (p < 0 || (T === 1 && P >= 1)) continue;
    const row = fwd.logits.subarray(p * V, (p + 1) * V);
    const out = samplingLogprobs(row, T, P);
    const tok = tokens[i]!;
    const t = Math.max(T, 1e-6);
    if (out[tok] === -Infinity) {
      // Renormalise the nucleus with the token in it: log Σ_{N ∪ tok} exp(z/T) from the kept logprobs.
      let sum = 0;
      let max = -Infinity;
      for (let v = 0; v < V; v++) if (out[v] !== -Infinity) max = Math.max(max, row[v]! / t);
      max = Math.max(max, row[tok]! / t);
      for (let v = 0; v < V; v++) if (out[v] !== -Infinity || v === tok) sum += Math.exp(row[v]! / t - max);
      const logZ = max + Math.log(sum);
      for (let v = 0; v < V; v++) if (out[v] !== -Infinity || v === tok) out[v] = row[v]! / t - logZ;
    }
    lp[i] = out[tok]!;
    rows.set(i, { q: Float32Array.from(out, (x) => Math.exp(x)), invT: 1 / t });
  }
  return rows;
}

/** Log-probabilities of `tokens[i]` predicted from its parent's position, for every i with a parent. */
function tokenLogprobs(fwd: ForwardResult, tokens: Int32Array, parents: Int32Array, V: number, softmaxOut?: Float32Array): Float32Array {
  const lp = new Float32Array(tokens.length);
  const rowLse = new Float64Array(fwd.T);
  for (let t = 0; t < fwd.T; t++) {
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, fwd.logits[t * V + v]!);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(fwd.logits[t * V + v]! - max);
    rowLse[t] = max + Math.log(sum);
    if (softmaxOut) for (let v = 0; v < V; v++) softmaxOut[t * V + v] = Math.exp(fwd.logits[t * V + v]! - rowLse[t]!);
  }
  for (let i = 0; i < tokens.length; i++) {
    const p = parents[i]!;
    lp[i] = p < 0 ? 0 : fwd.logits[p * V + tokens[i]!]! - rowLse[p]!;
  }
  return lp;
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

  constructor(private readonly policy: SharedPolicy, private readonly opt: OptimizerConfig) {
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
      last = this.epoch(batch, logpOld);
      first ??= last;
    }
    // Mismatch is read at the first epoch (same weights as the engine's); clipping at the last.
    return { ...last, loss: first!.loss, mismatchAbsLogp: first!.mismatchAbsLogp, mismatchKl: first!.mismatchKl, ...(epochs > 1 ? { epochs } : {}) };
  }

  private epoch(batch: TrainerBatch, logpOld: Map<string, Float32Array>): TrainMetrics {
    const { grads, metrics } = this.gradients(batch, logpOld);
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
    const model = this.policy.model;
    const V = this.policy.config.vocabSize;
    const grads = zerosLike(model.params);
    const totalTokens = batch.trees.reduce((n, t) => n + [...(batch.advantages.advantages.get(t.rolloutId)?.values() ?? [])].reduce((s, a) => s + a.length, 0), 0);
    const agg = { loss: 0, absLogp: 0, kl: 0, clip: 0, valueLoss: 0, tokens: 0 };
    for (const tree of batch.trees) {
      if (!batch.advantages.advantages.has(tree.rolloutId)) continue;
      const { packed, fwd } = this.forwardTree(tree, batch);
      const probs = new Float32Array(fwd.T * V);
      const lpAll = tokenLogprobs(fwd, packed.tokens, packed.parents, V, probs);
      // Tokens sampled with temperature or top-p are scored under that distribution (as the engine recorded them).
      const sampling = tokenSampling(tree, packed.nodeOffsets, packed.tokens.length);
      const tempered = sampling ? samplingRows(fwd, packed.tokens, packed.parents, V, sampling, lpAll) : undefined;
      const idx: number[] = [];
      for (let i = 0; i < packed.tokens.length; i++) if (packed.lossMask[i] && packed.parents[i]! >= 0) idx.push(i);
      const n = idx.length;
      if (n === 0) continue;
      const logp = Float32Array.from(idx, (i) => lpAll[i]!);
      if (!logpOld.has(tree.rolloutId)) logpOld.set(tree.rolloutId, logp);
      // The loss the config selects (`policyLoss` slot): core's clipped-tis, or a plugin's.
      const res = batch.policyLoss.compute({
        logp, logpOld: logpOld.get(tree.rolloutId)!, logpRollout: Float32Array.from(idx, (i) => packed.rolloutLogprobs[i]!),
        advantages: Float32Array.from(idx, (i) => packed.advantages[i]!),
        clipLow: batch.loss.clipLow, clipHigh: batch.loss.clipHigh, tisCap: batch.loss.tisCap,
      });
      const share = n / totalTokens; // token-mean over the whole batch
      const dlogits = new Float32Array(fwd.T * V);
      idx.forEach((i, j) => {
        const p = packed.parents[i]!;
        const gl = res.grad[j]! * share;
        if (gl === 0) return;
        const t = tempered?.get(i);
        if (t) {
          // d log q(tok | row p) / d logits[p] = (onehot(tok) − q) / T
          const g = gl * t.invT;
          for (let v = 0; v < V; v++) dlogits[p * V + v] = dlogits[p * V + v]! - g * t.q[v]!;
          dlogits[p * V + packed.tokens[i]!] = dlogits[p * V + packed.tokens[i]!]! + g;
          return;
        }
        // d logp(tok | row p) / d logits[p] = onehot(tok) − softmax(logits[p])
        for (let v = 0; v < V; v++) dlogits[p * V + v] = dlogits[p * V + v]! - gl * probs[p * V + v]!;
        dlogits[p * V + packed.tokens[i]!] = dlogits[p * V + packed.tokens[i]!]! + gl;
      });
      let dvalues: Float32Array | undefined;
      if (packed.valueTargets && fwd.values) {
        const vals = Float32Array.from(idx, (i) => fwd.values![packed.parents[i]!]!);
        const vl = valueLoss(vals, Float32Array.from(idx, (i) => packed.valueTargets![i]!));
        dvalues = new Float32Array(fwd.T);
        const coef = (batch.loss.valueCoef ?? 0.5) * share;
        idx.forEach((i, j) => { dvalues![packed.parents[i]!] = dvalues![packed.parents[i]!]! + coef * vl.grad[j]!; });
        agg.valueLoss += vl.loss * share;
      }
      model.backward(fwd, dlogits, grads, dvalues);
      agg.loss += res.loss * share;
      agg.absLogp += res.metrics.mismatchAbsLogp * share;
      agg.kl += res.metrics.mismatchKl * share;
      agg.clip += res.metrics.clipFraction * share;
      agg.tokens += n;
    }
    return { grads, metrics: { loss: agg.loss, mismatchAbsLogp: agg.absLogp, mismatchKl: agg.kl, clipFraction: agg.clip, tokens: agg.tokens, valueLoss: agg.valueLoss } };
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
