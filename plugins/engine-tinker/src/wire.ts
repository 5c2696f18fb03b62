import type { AdamParams, Datum, DatumLoss, DatumLossConfig } from '@clawgym/core';

/**
 * The Tinker API's JSON as SkyRL's open server reads and writes it: `skyrl/tinker/api.py` (request
 * models and routes) and `skyrl/tinker/types.py` (results) at NovaSky-AI/SkyRL commit
 * a9564572eb8e91076be43c1bd5e4615e3de17265. Field names are the wire's (snake_case).
 */
export const SKYRL_COMMIT = 'a9564572eb8e91076be43c1bd5e4615e3de17265';

/** `TensorData`: SkyRL reads `data`; the SDK also sends `dtype` and `shape`. */
export interface WireTensor { data: number[]; dtype?: 'int64' | 'float32'; shape?: number[] }
export interface WireModelInput { chunks: { type: 'encoded_text'; tokens: number[] }[] }
export interface WireDatum {
  model_input: WireModelInput;
  loss_fn_inputs: { target_tokens: WireTensor; weights?: WireTensor; logprobs?: WireTensor; advantages?: WireTensor };
}
export interface WirePassInput { data: WireDatum[]; loss_fn: DatumLoss; loss_fn_config?: Record<string, number> | null }
/** What every training and sampling route answers: a future to `retrieve_future`. */
export interface WireFuture { future_id: string; status: string; request_id: string }
/** `ForwardBackwardOutput`: per datum `logprobs` and `elementwise_loss` (SkyRL's JAX backend). */
export interface WirePassOutput { loss_fn_output_type: string; loss_fn_outputs: { logprobs?: WireTensor; elementwise_loss?: WireTensor }[]; metrics: Record<string, number> }
export interface WireSampleOutput { sequences: { stop_reason: 'length' | 'stop'; tokens: number[]; logprobs: number[] }[]; prompt_logprobs?: (number | null)[] | null }

const tensor = (xs: ArrayLike<number>, dtype: 'int64' | 'float32'): WireTensor => ({ data: Array.from(xs), dtype, shape: [xs.length] });

/** A model input of token ids, as one `encoded_text` chunk. */
export const modelInput = (ids: ArrayLike<number>): WireModelInput => ({ chunks: [{ type: 'encoded_text', tokens: Array.from(ids) }] });

/** The token ids of a model input (text chunks only; images are not ours to send). */
export function inputTokens(input: WireModelInput): number[] {
  return input.chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : []));
}

export function encodeDatum(d: Datum): WireDatum {
  return {
    model_input: modelInput(d.modelInput),
    loss_fn_inputs: {
      target_tokens: tensor(d.targetTokens, 'int64'),
      weights: tensor(d.weights, 'float32'),
      ...(d.logprobs ? { logprobs: tensor(d.logprobs, 'float32') } : {}),
      ...(d.advantages ? { advantages: tensor(d.advantages, 'float32') } : {}),
    },
  };
}

/** A datum off the wire; SkyRL's rule: missing `weights` are all 1 (`Datum.to_types`). */
export function decodeDatum(w: WireDatum): Datum {
  const ids = inputTokens(w.model_input);
  const t = w.loss_fn_inputs;
  return {
    modelInput: Int32Array.from(ids),
    targetTokens: Int32Array.from(t.target_tokens.data),
    weights: t.weights ? Float32Array.from(t.weights.data) : new Float32Array(t.target_tokens.data.length).fill(1),
    ...(t.logprobs ? { logprobs: Float32Array.from(t.logprobs.data) } : {}),
    ...(t.advantages ? { advantages: Float32Array.from(t.advantages.data) } : {}),
  };
}

export function encodeLossConfig(loss: DatumLoss, c?: DatumLossConfig): Record<string, number> | null {
  // SkyRL refuses loss_fn_config keys the loss does not take (ForwardBackwardInput's validator).
  if (loss !== 'ppo' || !c) return null;
  return { ...(c.clipLowThreshold !== undefined ? { clip_low_threshold: c.clipLowThreshold } : {}), ...(c.clipHighThreshold !== undefined ? { clip_high_threshold: c.clipHighThreshold } : {}) };
}

export function decodeLossConfig(c?: Record<string, number> | null): DatumLossConfig {
  return { ...(c?.clip_low_threshold !== undefined ? { clipLowThreshold: c.clip_low_threshold } : {}), ...(c?.clip_high_threshold !== undefined ? { clipHighThreshold: c.clip_high_threshold } : {}) };
}

/**
 * `AdamParams`. SkyRL's model has learning_rate, beta1, beta2, eps, weight_decay and ignores other
 * fields (its FSDP/Megatron backends clip by their own `max_grad_norm`); hosted Tinker also reads
 * `grad_clip_norm`, and so does `clawgym trainer serve`.
 */
export function encodeAdam(a: AdamParams): Record<string, number> {
  return { learning_rate: a.learningRate, beta1: a.beta1, beta2: a.beta2, eps: a.eps, weight_decay: a.weightDecay, ...(a.gradClipNorm !== undefined ? { grad_clip_norm: a.gradClipNorm } : {}) };
}

/** The same, off the wire, with SkyRL's defaults for fields left out. */
export function decodeAdam(w: Record<string, number | undefined>): AdamParams {
  return { learningRate: w.learning_rate ?? 1e-4, beta1: w.beta1 ?? 0.9, beta2: w.beta2 ?? 0.95, eps: w.eps ?? 1e-12, weightDecay: w.weight_decay ?? 0, gradClipNorm: w.grad_clip_norm ?? 0 };
}

/** `tinker://<model_id>/<kind>/<checkpoint>` or `tinker://<model_id>/<checkpoint>` (`TinkerPath.parse`). */
export function parseTinkerPath(uri: string): { modelId: string; kind: string; checkpoint: string } | undefined {
  const m = /^tinker:\/\/([^/]+)\/(?:([^/]+)\/)?([^/]+)$/.exec(uri);
  return m ? { modelId: m[1]!, kind: m[2] ?? '', checkpoint: m[3]! } : undefined;
}
