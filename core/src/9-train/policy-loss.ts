import type { PolicyLoss, PolicyLossInput, PolicyLossResult } from '../contracts/policy-loss';

export type { PolicyLossInput, PolicyLossResult } from '../contracts/policy-loss';

/**
 * The policy loss both GRPO and PPO use: PPO's clipped surrogate against the policy at the start
 * of the step, times a truncated token-level importance weight correcting the difference between
 * the engine that sampled and the trainer (TIS), token-mean over the batch:
 *
 *   L = −(1/N) Σ_t w_t · min(r_t A_t, clip(r_t, 1−ε_low, 1+ε_high) A_t),
 *   r_t = exp(logp_t − logpOld_t),  w_t = min(exp(logpOld_t − logpRollout_t), C)
 *
 * Tokens shared by several branches are passed once, so a shared prefix counts once.
 */
export function policyLoss(input: PolicyLossInput): PolicyLossResult {
  const n = input.logp.length;
  const grad = new Float32Array(n);
  let loss = 0;
  let absDiff = 0;
  let kl = 0;
  let clipLow = 0;
  let clipHigh = 0;
  let capped = 0;
  for (let t = 0; t < n; t++) {
    const a = input.advantages[t]!;
    const d = input.logpOld[t]! - input.logpRollout[t]!;
    const rho = Math.exp(d);
    const w = Math.min(rho, input.tisCap);
    if (rho > input.tisCap) capped++;
    absDiff += Math.abs(d);
    kl += rho - 1 - d;
    const r = Math.exp(input.logp[t]! - input.logpOld[t]!);
    const clipped = Math.min(Math.max(r, 1 - input.clipLow), 1 + input.clipHigh);
    const unclippedTerm = r * a;
    const clippedTerm = clipped * a;
    // min(r A, clip(r) A): the gradient flows only where the unclipped term is the smaller one.
    if (unclippedTerm <= clippedTerm) {
      loss -= w * unclippedTerm;
      grad[t] = -(w * unclippedTerm) / n;
    } else {
      loss -= w * clippedTerm;
      if (r < 1 - input.clipLow) clipLow++; else clipHigh++;
    }
  }
  return {
    loss: n ? loss / n : 0,
    grad,
    metrics: {
      mismatchAbsLogp: n ? absDiff / n : 0,
      mismatchKl: n ? kl / n : 0,
      clipFraction: n ? (clipLow + clipHigh) / n : 0,
      clipLowFraction: n ? clipLow / n : 0,
      clipHighFraction: n ? clipHigh / n : 0,
      tisCappedFraction: n ? capped / n : 0,
      tokens: n,
    },
  };
}

/** PPO's value loss (1/N) Σ (V_t − R)², with its gradient with respect to V. */
export function valueLoss(values: Float32Array, targets: Float32Array): { loss: number; grad: Float32Array } {
  const n = values.length;
  const grad = new Float32Array(n);
  let loss = 0;
  for (let t = 0; t < n; t++) {
    const e = values[t]! - targets[t]!;
    loss += e * e;
    grad[t] = (2 * e) / n;
  }
  return { loss: n ? loss / n : 0, grad };
}

/** Core's policy loss as a registered part: the config's default `policyLoss: 'clipped-tis'`. */
export const clippedTisLoss: PolicyLoss = { name: 'clipped-tis', compute: policyLoss };
