import { EngineChunkError, serverError, token, type Json, type Step } from './sse';
import type { TokenIdWire } from './wire';

/**
 * vLLM `/v1/completions` stream (vllm/entrypoints/openai/serving_completion.py,
 * `completion_stream_generator`; protocol.py `return_token_ids`): with `return_token_ids` each
 * chunk's `choices[0].token_ids` holds the ids new in that chunk (`prompt_token_ids` comes on
 * the first only), parallel to `choices[0].logprobs.token_logprobs`; `finish_reason` is set on
 * the last token's chunk; a failure mid-stream arrives as `data: {"error": {...}}`.
 */
export function parseVllm(chunk: Json): Step {
  if (chunk.error) serverError(chunk);
  const choice = chunk.choices?.[0];
  if (!choice) return { tokens: [], finished: false }; // e.g. a trailing usage chunk
  const ids = choice.token_ids;
  const lps = choice.logprobs?.token_logprobs ?? [];
  if (!Array.isArray(ids)) throw new EngineChunkError('chunk has no choices[0].token_ids (needs vLLM >= 0.10.2, which honours return_token_ids)');
  if (!Array.isArray(lps) || lps.length !== ids.length) throw new EngineChunkError('choices[0].logprobs.token_logprobs does not match token_ids');
  const reason = choice.finish_reason;
  if (reason === 'abort' || reason === 'error') throw new EngineChunkError(`generation ended with finish_reason "${reason}"`);
  return { tokens: ids.map((id: unknown, i: number) => token(id, lps[i])), finished: reason != null };
}

/**
 * vLLM's token-id completions: `prompt` as ids, `return_token_ids`, one logprob per token; a
 * LoRA adapter is asked for by its name as the `model`, and the chunks name it back (`<prefix>-v<version>`).
 * Its logprobs default to `raw` (`--logprobs-mode raw_logprobs`).
 */
export function vllmWire(model: string, loraPrefix: string): TokenIdWire {
  return {
    path: '/v1/completions',
    logprobs: 'raw',
    body: ({ promptIds, sampling }, stopIds, adapter) => ({
      model: adapter ?? model,
      prompt: [...promptIds], max_tokens: sampling.maxTokens, temperature: sampling.temperature, top_p: sampling.topP,
      ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
      stream: true, logprobs: 1, return_token_ids: true, skip_special_tokens: false,
      stop_token_ids: stopIds, include_stop_str_in_output: true,
    }),
    parse: (chunk) => parseVllm(chunk),
    version: (chunk) => {
      const m = typeof chunk.model === 'string' ? /-v(\d+)$/.exec(chunk.model) : null;
      return m && chunk.model.startsWith(loraPrefix) ? Number(m[1]) : undefined;
    },
  };
}
