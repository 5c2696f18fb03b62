import type { Datum, LossReduction } from '../contracts/datum';
import type { AdvantageResult, RolloutTree } from '../contracts/tree';
import { flattenBranches, packTree } from '../7-tree/pack';

/** A batch of trees as datums, and what the step needs beside them. */
export interface BatchDatums {
  datums: Datum[];
  /** Per datum, per target token: the engine's logprob (π_rollout) of it. */
  rolloutLogprobs: Float32Array[];
  /** Trained tokens in all: each generated token kept by the filters, once. */
  trainedTokens: number;
}

/**
 * Trees to datums (one per root-to-leaf branch, for trainers without tree attention): every
 * trained token is trained exactly once. A generated token on a prefix shared by several branches
 * has weight 1 (and its advantage) in the first branch that holds it and weight 0, advantage 0, in
 * the others, where it is only read. Branches that train nothing are left out. Position i of a
 * datum predicts token i + 1 of its branch, as in the Tinker API.
 */
export function treesToDatums(trees: readonly RolloutTree[], advantages: AdvantageResult): BatchDatums {
  const datums: Datum[] = [];
  const rolloutLogprobs: Float32Array[] = [];
  let trainedTokens = 0;
  for (const tree of trees) {
    if (!advantages.advantages.has(tree.rolloutId)) continue;
    for (const b of flattenBranches(packTree(tree, advantages))) {
      const n = b.tokens.length - 1;
      const weights = new Float32Array(n);
      const adv = new Float32Array(n);
      let trained = 0;
      // A branch's first token has no position before it to predict it from: never trained.
      for (let i = 0; i < n; i++) if (b.lossMask[i + 1]) { weights[i] = 1; adv[i] = b.advantages[i + 1]!; trained++; }
      if (trained === 0) continue;
      trainedTokens += trained;
      const ro = b.rolloutLogprobs.slice(1);
      datums.push({ modelInput: b.tokens.slice(0, n), targetTokens: b.tokens.slice(1), weights, logprobs: ro, advantages: adv });
      rolloutLogprobs.push(ro);
    }
  }
  return { datums, rolloutLogprobs, trainedTokens };
}

/**
 * Per datum, the factor that undoes the server's reduction, so that the reduced loss of advantages
 * times it is the plain sum over every weighted token of every datum — the tree loss's form:
 * `sum` 1; `token_mean` the Σ weight of the call (all datums go in one call); `sequence_mean`
 * D · Σ weight of the datum (the server divides each datum by its Σ weight, then by D datums).
 * Losses linear in the advantage (and `ppo`'s clip, positively homogeneous in it) carry it over.
 */
export function reductionFactors(datums: readonly Datum[], reduction: LossReduction): Float64Array {
  const weightOf = (x: Datum) => x.weights.reduce((a, w) => a + w, 0);
  if (reduction === 'sum') return new Float64Array(datums.length).fill(1);
  if (reduction === 'token_mean') return new Float64Array(datums.length).fill(datums.reduce((a, x) => a + weightOf(x), 0));
  return Float64Array.from(datums, (x) => datums.length * weightOf(x));
}

/**
 * Fold the truncated importance weight into the advantages, so a stock `ppo` (or
 * `importance_sampling`) loss against π_old computes the clipped, importance-weighted, token-mean
 * policy gradient: A'_t = A_t · min(π_old/π_rollout, C) / N, times the factor that undoes the
 * server's `reduction` ({@link reductionFactors}). The factors are numbers, not functions of the
 * weights, so they are detached by construction. Returns the datums with `logprobs` = π_old and
 * those advantages.
 */
export function foldImportanceWeight(d: BatchDatums, logpOld: readonly Float32Array[], tisCap: number, reduction: LossReduction = 'sum'): Datum[] {
  const factors = reductionFactors(d.datums, reduction);
  return d.datums.map((datum, k) => {
    const scale = d.trainedTokens > 0 ? factors[k]! / d.trainedTokens : 0;
    const old = logpOld[k]!;
    const ro = d.rolloutLogprobs[k]!;
    const adv = new Float32Array(old.length);
    for (let i = 0; i < adv.length; i++) {
      if (!datum.weights[i]) continue;
      adv[i] = datum.advantages![i]! * Math.min(Math.exp(old[i]! - ro[i]!), tisCap) * scale;
    }
    return { ...datum, logprobs: Float32Array.from(old), advantages: adv };
  });
}
