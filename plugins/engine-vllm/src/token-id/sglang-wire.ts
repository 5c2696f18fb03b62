import { versionOf } from '../weight-sync';
import { EngineChunkError, isNum, serverError, token, type Json, type Step } from './sse';
import type { TokenIdWire } from './wire';

/**
 * SGLang native `/generate` stream (python/sglang/srt/entrypoints/http_server.py and
 * managers/tokenizer_manager.py): `meta_info.output_token_logprobs` is a list of
 * `[logprob, token_id, text|null]`, cumulative over the stream by default but only the new
 * entries under `--incremental-streaming-output`; `meta_info.completion_tokens` counts all
 * output tokens so far, which tells the two apart. `meta_info.finish_reason` is null until the
 * end, then `{type: "stop"|"length"|"abort", ...}`; errors arrive as `data: {"error": {...}}`.
 */
export function parseSglang(chunk: Json, yielded: number): Step {
  if (chunk.error) serverError(chunk);
  const meta = chunk.meta_info;
  const entries = meta?.output_token_logprobs;
  if (!Array.isArray(entries)) throw new EngineChunkError('chunk has no meta_info.output_token_logprobs');
  const reason = meta.finish_reason;
  if (reason?.type === 'abort') throw new EngineChunkError(`generation aborted: ${reason.message ?? JSON.stringify(reason)}`);
  const incremental = isNum(meta.completion_tokens) && entries.length === meta.completion_tokens - yielded;
  const fresh = incremental ? entries : entries.slice(yielded);
  return { tokens: fresh.map((e: unknown) => (Array.isArray(e) ? token(e[1], e[0]) : token(undefined, undefined))), finished: reason != null };
}

/**
 * SGLang's native generation: `input_ids`, `return_logprob`; a chunk's `meta_info.weight_version`
 * says which weights served it. Its logprobs default to `processed` (after temperature/top-p).
 */
export function sglangWire(): TokenIdWire {
  return {
    path: '/generate',
    logprobs: 'processed',
    seedProbe: true,
    body: ({ promptIds, sampling }, stopIds, adapter, seeded) => ({
      input_ids: [...promptIds], stream: true, return_logprob: true,
      sampling_params: {
        max_new_tokens: sampling.maxTokens, temperature: sampling.temperature, top_p: sampling.topP, stop_token_ids: stopIds,
        // Only where the server applies it (sglang-seed.ts): one that does not know the key fails the request.
        ...(seeded && sampling.seed !== undefined ? { sampling_seed: sampling.seed } : {}),
      },
      // A LoRA adapter is asked for by the name it was loaded under (GenerateReqInput.lora_path).
      ...(adapter === undefined ? {} : { lora_path: adapter }),
    }),
    parse: parseSglang,
    // An SGLang LoRA adapter leaves the server's weight_version (its base weights') as it was.
    version: (chunk, adapter) => (adapter === undefined ? versionOf(chunk.meta_info?.weight_version) : undefined),
  };
}
