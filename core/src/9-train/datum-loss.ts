import type { DatumLoss, DatumLossConfig } from '../contracts/datum';

/** One token's loss and its derivative in logp, as the Tinker API defines each loss (SkyRL `skyrl/tinker/loss_fns.py`). */
export function datumTokenLoss(loss: DatumLoss, logp: number, sampled: number, a: number, c: DatumLossConfig): { value: number; dlogp: number } {
  if (loss === 'cross_entropy') return { value: -logp, dlogp: -1 };
  const r = Math.exp(logp - sampled);
  if (loss === 'importance_sampling') return { value: -r * a, dlogp: -r * a };
  const lo = c.clipLowThreshold ?? 0.8;
  const hi = c.clipHighThreshold ?? 1.2;
  const clipped = Math.min(Math.max(r, lo), hi);
  // −min(r·A, clip(r)·A): the gradient flows where the unclipped term is the smaller one.
  return r * a <= clipped * a ? { value: -r * a, dlogp: -r * a } : { value: -clipped * a, dlogp: 0 };
}
