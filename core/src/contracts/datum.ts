/**
 * The trainer contract's remote form: the Tinker API's operations on datums
 * (`tinker-docs.thinkingmachines.ai`; SkyRL's open server `skyrl/tinker/api.py`). A datum is one
 * token sequence: position i of `modelInput` predicts `targetTokens[i]`. How per-token losses are
 * reduced is the backend's ({@link LossReduction}); the datum builder scales advantages for it.
 */
export interface Datum {
  /** Input token ids (the sequence without its last token). */
  modelInput: Int32Array;
  /** The token each input position predicts (the sequence without its first token). */
  targetTokens: Int32Array;
  /** Per target token: 1 where trained, 0 where only read (a prompt, or a token another datum trains). */
  weights: Float32Array;
  /** Per target token: the logprobs the ratio is taken against (`importance_sampling`, `ppo`). */
  logprobs?: Float32Array;
  /** Per target token: the advantage (0 where the weight is 0). */
  advantages?: Float32Array;
}

/**
 * How a backend's `forward_backward` reduces weighted per-token losses (a Tinker-API backend's is in `@clawgym/engine-tinker`):
 * `sum` over all tokens; `token_mean`, that sum over Σ weight of the call; `sequence_mean`, per
 * datum Σ w·loss / Σ w, then the mean over the datums accumulated before `optim_step`.
 */
export type LossReduction = 'sum' | 'token_mean' | 'sequence_mean';

/**
 * The reductions a trainer backend's `forward_backward` may apply:
 * - `sum`: Σ over datums and tokens of weight · loss (hosted Tinker; SkyRL FSDP/Megatron, whose
 *   Tinker path sums: `reduce_loss` in skyrl/backends/skyrl_train/utils/ppo_utils.py; their
 *   `loss_reduction` setting belongs to SkyRL's own trainer loop, not the Tinker server);
 * - `token_mean`: that sum divided by Σ weight over the whole `forward_backward` call;
 * - `sequence_mean`: per datum Σ weight · loss / Σ weight, then the mean over every datum
 *   accumulated before `optim_step` (SkyRL JAX: skyrl/backends/jax.py `per_seq_loss`, gradients
 *   divided by the accumulated count).
 */
export const LOSS_REDUCTIONS: readonly LossReduction[] = ['sum', 'token_mean', 'sequence_mean'];

/** Losses of `forward_backward`, as the Tinker API names them. */
export type DatumLoss = 'cross_entropy' | 'importance_sampling' | 'ppo';

/** `loss_fn_config` of `ppo`: bounds of the ratio itself (e.g. 0.8 and 1.28), not ε. */
export interface DatumLossConfig {
  clipLowThreshold?: number;
  clipHighThreshold?: number;
}

/** What `forward` and `forward_backward` return: per datum, the logprob of each target token. */
export interface DatumPassResult {
  logprobs: Float32Array[];
  /** Sum of the per-token losses (forward_backward only). */
  loss?: number;
}

/** `optim_step`'s Adam settings (`grad_clip_norm` 0: no clipping). */
export interface AdamParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  gradClipNorm?: number;
}

/**
 * A trainer that takes datums (what `clawgym trainer serve` serves, and what a Tinker client
 * sends): score them, accumulate the gradient of a loss over them, apply it. Gradients accumulate
 * across `forwardBackward` calls until `optimStep`.
 */
export interface DatumTrainer {
  /** How `forwardBackward` reduces its per-token losses (default `sum`): a server sets it to the backend it reproduces. */
  reduction?: LossReduction;
  forward(data: readonly Datum[]): Promise<DatumPassResult>;
  forwardBackward(data: readonly Datum[], loss: DatumLoss, config?: DatumLossConfig): Promise<DatumPassResult>;
  optimStep(adam: AdamParams): Promise<{ gradNorm: number }>;
}
