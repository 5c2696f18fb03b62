import type { Datum, DatumPassResult } from '@clawgym/core';

/**
 * What the Tinker SDK puts in one forward or forward_backward request at most
 * (thinking-machines-lab/tinker@d595dc2 src/tinker/types/client_config_response.py:24-26):
 * 1,024 datums, 5,000,000 estimated bytes.
 */
export const SDK_CHUNK = { maxDatums: 1024, maxBytes: 5_000_000 } as const;

/**
 * The SDK's estimate of a datum's size in a request (training_client.py:47-78,
 * `_estimate_datum_bytes_count_proto`): 4 bytes per input token, each loss input in its dtype
 * (target tokens int64, weights, logprobs and advantages float32).
 */
export function datumBytes(d: Datum): number {
  return 4 * d.modelInput.length + 8 * d.targetTokens.length + 4 * (d.weights.length + (d.logprobs?.length ?? 0) + (d.advantages?.length ?? 0));
}

/**
 * Datums cut into requests as the SDK cuts them (training_client.py:180-202,
 * `_chunked_requests_generator`): in order, a new request when the next datum would take the
 * current one past `maxBytes` or it already holds `maxDatums`; a datum larger than `maxBytes`
 * goes alone.
 */
export function chunkDatums<T extends Datum>(data: readonly T[], limits: { maxDatums: number; maxBytes: number } = SDK_CHUNK): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const d of data) {
    const b = datumBytes(d);
    if ((current.length > 0 && bytes + b > limits.maxBytes) || current.length === limits.maxDatums) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(d);
    bytes += b;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * One pass over `data` sent as the SDK's chunks, one request after another, and put back
 * together as the SDK's `combine_fwd_bwd_output_results` does: the datums' outputs in order,
 * the loss sums added. The gradients of `forward_backward` requests accumulate on the service
 * until `optim_step`, so for a backend whose reduction is a sum over everything accumulated
 * (SkyRL FSDP/Megatron), or a mean over every datum accumulated (SkyRL JAX), the step is the same.
 */
export async function chunkedPass(data: readonly Datum[], send: (chunk: readonly Datum[]) => Promise<DatumPassResult>, limits = SDK_CHUNK): Promise<DatumPassResult> {
  const logprobs: Float32Array[] = [];
  let loss: number | undefined;
  for (const chunk of chunkDatums(data, limits)) {
    const r = await send(chunk);
    logprobs.push(...r.logprobs);
    if (r.loss !== undefined) loss = (loss ?? 0) + r.loss;
  }
  return loss === undefined ? { logprobs } : { logprobs, loss };
}
