import { valueLoss, type PackedTree, type PolicyLoss, type PolicyLossConfig, type RolloutTree, type TrainMetrics } from '@clawgym/core';
import { samplingLogprobs } from './engine';
import { zerosLike, type ForwardResult, type Params, type Transformer } from './model';

/** Per packed token, the temperature and top-p its call sampled with (see {@link samplingRows}). */
export interface TokenSampling { temperature: Float32Array; topP: Float32Array }

/** The sampling settings of each packed token, from its generated node; undefined when all are plain softmax. */
export function tokenSampling(tree: RolloutTree, offsets: Int32Array, length: number): TokenSampling | undefined {
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
export function samplingRows(fwd: ForwardResult, tokens: Int32Array, parents: Int32Array, V: number, s: TokenSampling, lp: Float32Array): Map<number, { q: Float32Array; invT: number }> {
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
export function tokenLogprobs(fwd: ForwardResult, tokens: Int32Array, parents: Int32Array, V: number, softmaxOut?: Float32Array): Float32Array {
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

/** One tree of a gradient job: packed (only trees the batch trains), and its tokens' sampling settings. */
export interface GradientTree { packed: PackedTree; sampling?: TokenSampling }

/**
 * What the gradient of an RL batch needs besides the weights: plain data (typed arrays and
 * numbers), so that it can be computed in this thread or handed whole to the trainer's worker.
 */
export interface GradientJob {
  trees: GradientTree[];
  /** Trained tokens in the whole batch (the token mean's denominator). */
  totalTokens: number;
  loss: PolicyLossConfig;
}

/**
 * The gradient of the batch's loss at `model`'s weights, without applying it: per tree one
 * forward pass, the policy loss (clipped against `logpOld`, which is filled with the current
 * logprobs where a tree has none yet) and PPO's value loss where the batch has value targets,
 * one backward pass into the summed gradients. The embedded trainer runs it in process or in its
 * worker thread; both run this function on the same weights, so both give the same floats.
 */
export function treeGradients(model: Transformer, job: GradientJob, logpOld: Map<string, Float32Array>, policyLoss: PolicyLoss): { grads: Params; metrics: TrainMetrics } {
  const V = model.config.vocabSize;
  const grads = zerosLike(model.params);
  const agg = { loss: 0, absLogp: 0, kl: 0, clip: 0, valueLoss: 0, tokens: 0 };
  for (const { packed, sampling } of job.trees) {
    const fwd = model.forward(packed.tokens, packed.parents, packed.positions);
    const probs = new Float32Array(fwd.T * V);
    const lpAll = tokenLogprobs(fwd, packed.tokens, packed.parents, V, probs);
    // Tokens sampled with temperature or top-p are scored under that distribution (as the engine recorded them).
    const tempered = sampling ? samplingRows(fwd, packed.tokens, packed.parents, V, sampling, lpAll) : undefined;
    const idx: number[] = [];
    for (let i = 0; i < packed.tokens.length; i++) if (packed.lossMask[i] && packed.parents[i]! >= 0) idx.push(i);
    const n = idx.length;
    if (n === 0) continue;
    const logp = Float32Array.from(idx, (i) => lpAll[i]!);
    if (!logpOld.has(packed.rolloutId)) logpOld.set(packed.rolloutId, logp);
    // The loss the config selects (`policyLoss` slot): core's clipped-tis, or a plugin's.
    const res = policyLoss.compute({
      logp, logpOld: logpOld.get(packed.rolloutId)!, logpRollout: Float32Array.from(idx, (i) => packed.rolloutLogprobs[i]!),
      advantages: Float32Array.from(idx, (i) => packed.advantages[i]!),
      clipLow: job.loss.clipLow, clipHigh: job.loss.clipHigh, tisCap: job.loss.tisCap,
    });
    const share = n / job.totalTokens; // token-mean over the whole batch
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
      const coef = (job.loss.valueCoef ?? 0.5) * share;
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
