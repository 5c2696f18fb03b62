import type { ChatTemplate, Engine, GenerateRequest, GeneratedToken, Tokenizer } from '../contracts/engine';
import { ClawGymError, ErrorCodes, messageOf } from '../errors';

/** Options of {@link createTokenIdEngine}. */
export interface TokenIdEngineOptions {
  flavor: 'vllm' | 'sglang';
  /** Server root, e.g. `http://127.0.0.1:8000` (no `/v1`). */
  baseUrl: string;
  /** Model name sent to vLLM (SGLang's `/generate` serves its one model). */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  name?: string;
  policyVersion?: () => number;
  /** Longest wait for the response or for its next bytes, in ms (default 120000). */
  requestTimeoutMs?: number;
  /** Stand-in for the global `fetch`. */
  fetch?: typeof fetch;
  /** The server's context (vLLM's `max_model_len`), when known: see {@link Engine.contextLength}. */
  contextLength?: number;
  /**
   * What the server's logprobs are: `raw` (vLLM's default `--logprobs-mode raw_logprobs`, before
   * temperature/top-p) or `processed` (`--logprobs-mode processed_logprobs`, what importance
   * weights need). Recorded with every call; default `raw`.
   */
  logprobs?: 'processed' | 'raw';
}

/** What one SSE chunk carries: the tokens new in it, and whether generation ended. */
interface Step { tokens: GeneratedToken[]; finished: boolean }

/** Thrown by the parsers; becomes a ClawGymError naming flavor and URL. */
class WireError extends Error {}

type Json = Record<string, any>;

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** The message of an error, with its cause's; duck-typed, since fetch errors may come from another realm. */
const errorText = (e: unknown): string => {
  const { message, cause } = (e ?? {}) as { message?: unknown; cause?: unknown };
  const own = typeof message === 'string' ? message : messageOf(e);
  return cause === undefined ? own : `${own} (${errorText(cause)})`;
};

function token(id: unknown, logprob: unknown): GeneratedToken {
  if (!Number.isInteger(id) || !isNum(logprob)) throw new WireError(`bad token entry (id ${JSON.stringify(id)}, logprob ${JSON.stringify(logprob)})`);
  return { tokenId: id as number, logprob };
}

/** A server-reported error (`data: {"error": ...}`) or an aborted generation. */
function serverError(chunk: Json): never {
  const e = chunk.error;
  throw new WireError(`server error: ${typeof e === 'string' ? e : e?.message ?? JSON.stringify(e)}`);
}

/**
 * vLLM `/v1/completions` stream (vllm/entrypoints/openai/serving_completion.py,
 * `completion_stream_generator`; protocol.py `return_token_ids`): with `return_token_ids` each
 * chunk's `choices[0].token_ids` holds the ids new in that chunk (`prompt_token_ids` comes on
 * the first only), parallel to `choices[0].logprobs.token_logprobs`; `finish_reason` is set on
 * the last token's chunk; a failure mid-stream arrives as `data: {"error": {...}}`.
 */
function parseVllm(chunk: Json): Step {
  if (chunk.error) serverError(chunk);
  const choice = chunk.choices?.[0];
  if (!choice) return { tokens: [], finished: false }; // e.g. a trailing usage chunk
  const ids = choice.token_ids;
  const lps = choice.logprobs?.token_logprobs ?? [];
  if (!Array.isArray(ids)) throw new WireError('chunk has no choices[0].token_ids (needs vLLM >= 0.10.2, which honours return_token_ids)');
  if (!Array.isArray(lps) || lps.length !== ids.length) throw new WireError('choices[0].logprobs.token_logprobs does not match token_ids');
  const reason = choice.finish_reason;
  if (reason === 'abort' || reason === 'error') throw new WireError(`generation ended with finish_reason "${reason}"`);
  return { tokens: ids.map((id: unknown, i: number) => token(id, lps[i])), finished: reason != null };
}

/**
 * SGLang native `/generate` stream (python/sglang/srt/entrypoints/http_server.py and
 * managers/tokenizer_manager.py): `meta_info.output_token_logprobs` is a list of
 * `[logprob, token_id, text|null]`, cumulative over the stream by default but only the new
 * entries under `--incremental-streaming-output`; `meta_info.completion_tokens` counts all
 * output tokens so far, which tells the two apart. `meta_info.finish_reason` is null until the
 * end, then `{type: "stop"|"length"|"abort", ...}`; errors arrive as `data: {"error": {...}}`.
 */
function parseSglang(chunk: Json, yielded: number): Step {
  if (chunk.error) serverError(chunk);
  const meta = chunk.meta_info;
  const entries = meta?.output_token_logprobs;
  if (!Array.isArray(entries)) throw new WireError('chunk has no meta_info.output_token_logprobs');
  const reason = meta.finish_reason;
  if (reason?.type === 'abort') throw new WireError(`generation aborted: ${reason.message ?? JSON.stringify(reason)}`);
  const incremental = isNum(meta.completion_tokens) && entries.length === meta.completion_tokens - yielded;
  const fresh = incremental ? entries : entries.slice(yielded);
  return { tokens: fresh.map((e: unknown) => (Array.isArray(e) ? token(e[1], e[0]) : token(undefined, undefined))), finished: reason != null };
}

/** Data payloads of a server-sent-event stream; calls `onBytes` whenever bytes arrive. */
async function* sseData(body: ReadableStream<Uint8Array>, onBytes: () => void): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let data: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (!done) onBytes();
    buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const lines = buffered.split(/\r?\n/);
    buffered = done ? '' : lines.pop()!;
    for (const line of lines) {
      if (line === '') { if (data.length) yield data.join('\n'); data = []; }
      else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
    if (done) { if (data.length) yield data.join('\n'); return; }
  }
}

/**
 * An {@link Engine} served by a vLLM or SGLang server with token ids in and out: the prompt
 * ids we rendered are sent verbatim (vLLM `POST /v1/completions` with `prompt: number[]`;
 * SGLang `POST /generate` with `input_ids`), and each generated id with its logprob is yielded
 * as soon as the server's SSE chunk for it arrives, so records hold exactly what was sampled.
 *
 * Stop ids are the template's plus `sampling.stopIds`; the stop token stays in the output.
 * Aborting `request.signal` (or returning from the iterator early) closes the upstream
 * request, and the stream then ends without an error. A non-2xx answer, a connection failure,
 * a malformed or error chunk, a stream that ends without a finish reason, or no bytes for
 * `requestTimeoutMs` throws a {@link ClawGymError} (`CLAWGYM_ENGINE_FAILED`) naming flavor and URL.
 */
export function createTokenIdEngine(options: TokenIdEngineOptions): Engine {
  const { flavor, model, chatTemplate } = options;
  const url = options.baseUrl.replace(/\/+$/, '') + (flavor === 'vllm' ? '/v1/completions' : '/generate');
  const timeoutMs = options.requestTimeoutMs ?? 120_000;
  const doFetch = options.fetch ?? fetch;
  const fail = (what: string, cause?: unknown) =>
    new ClawGymError(ErrorCodes.ENGINE_FAILED, `${flavor} engine: ${what} (POST ${url})`, { cause });

  const requestBody = ({ promptIds, sampling }: GenerateRequest) => {
    const stopIds = [...chatTemplate.stopIds, ...(sampling.stopIds ?? [])];
    if (flavor === 'sglang') {
      return {
        input_ids: [...promptIds], stream: true, return_logprob: true,
        sampling_params: { max_new_tokens: sampling.maxTokens, temperature: sampling.temperature, top_p: sampling.topP, stop_token_ids: stopIds },
      };
    }
    return {
      model, prompt: [...promptIds], max_tokens: sampling.maxTokens, temperature: sampling.temperature, top_p: sampling.topP,
      ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
      stream: true, logprobs: 1, return_token_ids: true, skip_special_tokens: false,
      stop_token_ids: stopIds, include_stop_str_in_output: true,
    };
  };

  async function* generate(request: GenerateRequest): AsyncGenerator<GeneratedToken> {
    const { signal } = request;
    if (signal?.aborted) return;
    const upstream = new AbortController();
    const onAbort = () => upstream.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => { timedOut = true; upstream.abort(); }, timeoutMs);
    };
    let complete = false;
    try {
      arm();
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
      if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
      const res = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(requestBody(request)), signal: upstream.signal });
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        throw fail(`HTTP ${res.status} ${res.statusText}${text ? `: ${text.slice(0, 500)}` : ''}`);
      }
      if (!res.body) throw fail(`HTTP ${res.status} with no body`);
      let yielded = 0;
      let finished = false;
      for await (const data of sseData(res.body, arm)) {
        if (data === '[DONE]') continue;
        let chunk: Json;
        try { chunk = JSON.parse(data); } catch { throw fail(`malformed chunk: ${data.slice(0, 200)}`); }
        const step = flavor === 'vllm' ? parseVllm(chunk) : parseSglang(chunk, yielded);
        finished ||= step.finished;
        for (const t of step.tokens) {
          yielded++;
          clearTimeout(timer); // the consumer's pace is not the server's silence
          yield t;
          arm();
        }
      }
      if (!finished) throw fail(`stream ended after ${yielded} tokens without a finish reason`);
      complete = true;
    } catch (err) {
      if (signal?.aborted) return; // the client went away: stop quietly, as the contract asks
      if (timedOut) throw fail(`no response for ${timeoutMs} ms (requestTimeoutMs)`, err);
      if (err instanceof ClawGymError) throw err;
      throw fail(err instanceof WireError ? err.message : `request failed: ${errorText(err)}`, err);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (!complete) upstream.abort(); // closes the connection when the consumer stopped early
    }
  }

  return {
    name: options.name ?? `${flavor}:${model}`,
    tokenizer: options.tokenizer,
    chatTemplate,
    policyVersion: () => options.policyVersion?.() ?? 0,
    logprobs: options.logprobs ?? 'raw',
    ...(options.contextLength === undefined ? {} : { contextLength: options.contextLength }),
    generate,
  };
}
