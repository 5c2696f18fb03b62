/**
 * What a Tinker-API trainer backend does with what it is sent, read from the servers' sources
 * (SkyRL = NovaSky-AI/SkyRL at a9564572eb8e91076be43c1bd5e4615e3de17265; hosted Tinker from
 * its documentation and SDK thinking-machines-lab/tinker d595dc2). The client builds its datums
 * and checks its config by these; `clawgym trainer serve --backend` reproduces them.
 */

import { LOSS_REDUCTIONS, type LossReduction } from '@clawgym/core';

export { LOSS_REDUCTIONS, type LossReduction };


/** The trainer backends ClawGym knows the behaviour of. */
export type TrainerBackend = 'skyrl-fsdp' | 'skyrl-megatron' | 'skyrl-jax' | 'tinker';
export const TRAINER_BACKENDS: readonly TrainerBackend[] = ['skyrl-fsdp', 'skyrl-megatron', 'skyrl-jax', 'tinker'];

export interface BackendTraits {
  reduction: LossReduction;
  /**
   * `lr-only`: `optim_step` applies the learning rate and nothing else; betas, eps, weight decay
   * and gradient clipping are fixed when the server builds its optimizer (SkyRL FSDP/Megatron:
   * `optim_step` in skyrl/backends/skyrl_train_backend.py). `all`: every Adam field is applied.
   */
  optimizer: 'all' | 'lr-only';
  /** Whether `asample` takes `base_model` (SkyRL FSDP/Megatron answer "Sampling requested for unknown model_id(s): ['']"). */
  samplesBaseModel: boolean;
  /**
   * Models one server holds at once: `one` (SkyRL FSDP: a second `create_model` fails until
   * `unload_model`), `lora` (more LoRA adapters of the first one's rank; SkyRL Megatron, JAX), `many`.
   */
  tenancy: 'one' | 'lora' | 'many';
  /**
   * Whether `asample` samples the checkpoint its `model_path` names. SkyRL FSDP/Megatron sample
   * whatever their inference engines were synced with last, whichever checkpoint the path names
   * (skyrl/backends/skyrl_train_backend.py `_sample_with_remote_client` sends the model id, never
   * the checkpoint; so does skyrl/tinker/extra/skyrl_train_inference_forwarding.py); JAX loads
   * the adapter of the checkpoint.
   */
  samplesNamedCheckpoint: boolean;
}

export const BACKEND_TRAITS: Record<TrainerBackend, BackendTraits> = {
  'skyrl-fsdp': { reduction: 'sum', optimizer: 'lr-only', samplesBaseModel: false, tenancy: 'one', samplesNamedCheckpoint: false },
  'skyrl-megatron': { reduction: 'sum', optimizer: 'lr-only', samplesBaseModel: false, tenancy: 'lora', samplesNamedCheckpoint: false },
  'skyrl-jax': { reduction: 'sequence_mean', optimizer: 'all', samplesBaseModel: true, tenancy: 'lora', samplesNamedCheckpoint: true },
  tinker: { reduction: 'sum', optimizer: 'all', samplesBaseModel: true, tenancy: 'many', samplesNamedCheckpoint: true },
};

/**
 * The optimizer SkyRL's FSDP/Megatron workers build at start and keep (`OptimizerConfig` in
 * skyrl/train/config/config.py): what `clawgym trainer serve --backend skyrl-fsdp` applies
 * whatever `optim_step` sends besides the learning rate.
 */
export const SKYRL_FIXED_OPTIMIZER = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, gradClipNorm: 1 } as const;

/** Grad-norm metric names, SkyRL's first (`skyrl.ai/grad_norm`, FSDP and JAX), then a plain one. */
export const GRAD_NORM_KEYS = ['skyrl.ai/grad_norm', 'grad_norm'] as const;
/** Loss-sum metric names: `loss:sum` (hosted Tinker's documented name), SkyRL FSDP/Megatron `total_loss:sum` (`_extract_metrics`); else the client sums `elementwise_loss`. */
export const LOSS_SUM_KEYS = ['loss:sum', 'total_loss:sum'] as const;

/** The first finite metric among `keys`. */
export function metricOf(metrics: Record<string, unknown> | null | undefined, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = metrics?.[k];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}
