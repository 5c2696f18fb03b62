import type { Datum, DatumLossConfig } from '@clawgym/core';
import type { WirePassOutput } from '@clawgym/engine-tinker';

/** `ForwardBackwardOutput` as SkyRL's JAX backend writes it: per datum logprobs and elementwise loss. */
export function passOutput(data: Datum[], logprobs: Float32Array[], loss: string | undefined, total?: number, c: DatumLossConfig = {}): WirePassOutput {
  const t = (xs: ArrayLike<number>) => ({ data: Array.from(xs), dtype: 'float32' as const, shape: [xs.length] });
  return {
    loss_fn_output_type: 'scalar',
    loss_fn_outputs: data.map((d, k) => ({
      logprobs: t(logprobs[k]!),
      ...(loss ? { elementwise_loss: t(elementwise(loss, d, logprobs[k]!, c)) } : {}),
    })),
    // SkyRL FSDP/Megatron name the loss `total_loss:sum` (`_extract_metrics`, skyrl/backends/skyrl_train_backend.py).
    metrics: total !== undefined ? { 'total_loss:sum': total } : {},
  };
}

/** Per-token losses (weighted), for `elementwise_loss`; their sum is the loss. */
function elementwise(loss: string, d: Datum, lp: Float32Array, c: DatumLossConfig): Float32Array {
  return Float32Array.from(lp, (l, i) => {
    const w = d.weights[i]!;
    if (!w) return 0;
    if (loss === 'cross_entropy') return -w * l;
    const r = Math.exp(l - (d.logprobs?.[i] ?? 0));
    const a = d.advantages?.[i] ?? 0;
    if (loss !== 'ppo') return -w * r * a;
    return -w * Math.min(r * a, Math.min(Math.max(r, c.clipLowThreshold ?? 0.8), c.clipHighThreshold ?? 1.2) * a);
  });
}
