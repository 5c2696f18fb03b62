import type { AdamParams, DatumTrainer, LossReduction } from '../contracts/datum';
import type { TrainerBatch, TrainMetrics } from '../contracts/trainer';
import { ClawGymError, ErrorCodes } from '../errors';
import { foldImportanceWeight, treesToDatums } from './datums';
import { clippedTisLoss } from './policy-loss';

/**
 * One RL step through the Tinker operations: the trees as datums; `forward` for π_old (the
 * weights at the start of the step); the truncated importance weight folded into the advantages;
 * per epoch a `forward_backward` with the stock `ppo` loss (ratio against π_old, clipped to
 * [1 − clipLow, 1 + clipHigh]) and an `optim_step`. This is the gradient of core's `clipped-tis`
 * loss (`train/policy-loss.ts`), which is the only policy loss it can express.
 * `adam(epoch)` gives the optimiser settings of each optimiser step (the caller's schedule);
 * `reduction` is how the server reduces the loss (its backend's), which the advantages undo.
 */
export async function datumStep(ops: DatumTrainer, batch: TrainerBatch, adam: (epoch: number) => AdamParams, reduction: LossReduction = ops.reduction ?? 'sum'): Promise<TrainMetrics> {
  if (batch.policyLoss.name !== clippedTisLoss.name) {
    throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `a trainer reached over the Tinker API computes the "${clippedTisLoss.name}" policy loss only, not "${batch.policyLoss.name}"`, { hint: 'Drop the `policyLoss` slot from the config, or use the embedded trainer, which runs any registered policy loss.' });
  }
  const d = treesToDatums(batch.trees, batch.advantages);
  const epochs = Math.max(1, Math.floor(batch.loss.epochs ?? 1));
  const { logprobs: logpOld } = await ops.forward(d.datums);
  // Mismatch between the engine that sampled and the trainer, over the trained tokens.
  let absLogp = 0;
  let kl = 0;
  d.datums.forEach((datum, k) => datum.weights.forEach((w, i) => {
    if (!w) return;
    const diff = logpOld[k]![i]! - d.rolloutLogprobs[k]![i]!;
    absLogp += Math.abs(diff);
    kl += Math.exp(diff) - 1 - diff;
  }));
  const data = foldImportanceWeight(d, logpOld, batch.loss.tisCap, reduction);
  const lo = 1 - batch.loss.clipLow;
  const hi = 1 + batch.loss.clipHigh;
  let firstLoss = 0;
  let clipped = 0;
  let gradNorm = 0;
  for (let e = 0; e < epochs; e++) {
    const res = await ops.forwardBackward(data, 'ppo', { clipLowThreshold: lo, clipHighThreshold: hi });
    if (e === 0) firstLoss = res.loss ?? 0;
    // Clipped tokens (no gradient) as the in-process loss counts them, read at the last epoch.
    clipped = 0;
    data.forEach((datum, k) => datum.weights.forEach((w, i) => {
      if (!w) return;
      const r = Math.exp(res.logprobs[k]![i]! - datum.logprobs![i]!);
      const a = datum.advantages![i]!;
      if (r * a > Math.min(Math.max(r, lo), hi) * a) clipped++;
    }));
    ({ gradNorm } = await ops.optimStep(adam(e)));
  }
  const n = d.trainedTokens || 1;
  // SkyRL's optim_step reports no gradient norm: leave it out rather than log NaN.
  return { loss: firstLoss, mismatchAbsLogp: absLogp / n, mismatchKl: kl / n, clipFraction: clipped / n, tokens: d.trainedTokens, ...(Number.isFinite(gradNorm) ? { gradNorm } : {}), datums: d.datums.length, ...(epochs > 1 ? { epochs } : {}) };
}
