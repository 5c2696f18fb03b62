/** Inputs of the policy loss over the trained tokens of a batch (each token once). */
export interface PolicyLossInput {
  /** log π_θ(token) under the weights being optimised. */
  logp: Float32Array;
  /** log π_old: the trainer's policy at the start of the step (no gradient). */
  logpOld: Float32Array;
  /** log π_rollout: what the engine sampled with (no gradient). */
  logpRollout: Float32Array;
  advantages: Float32Array;
  clipLow: number;
  clipHigh: number;
  /** Truncation C of the importance weight min(π_old / π_rollout, C). */
  tisCap: number;
}

/** Loss, its gradient with respect to `logp`, and the step's mismatch and clipping metrics. */
export interface PolicyLossResult {
  loss: number;
  /** dLoss / dlogp, per token. */
  grad: Float32Array;
  metrics: {
    /** Mean |log π_old − log π_rollout|: how far trainer and engine disagree. */
    mismatchAbsLogp: number;
    /** k3 estimate of KL(π_rollout ‖ π_old) from the rollout's samples. */
    mismatchKl: number;
    /** Share of tokens whose ratio was clipped (gradient zero). */
    clipFraction: number;
    clipLowFraction?: number;
    clipHighFraction?: number;
    /** Share of tokens whose importance weight hit the cap C. */
    tisCappedFraction?: number;
    tokens: number;
  };
}

/**
 * A policy loss, registered by plugins (`api.provide.policyLoss`) and chosen by the config's
 * `policyLoss` slot (default `clipped-tis`, core's own). Trainers that compute the loss in
 * process (the embedded one) call the one the batch carries; the algorithm never sees it.
 */
export interface PolicyLoss {
  readonly name: string;
  compute(input: PolicyLossInput): PolicyLossResult;
}
