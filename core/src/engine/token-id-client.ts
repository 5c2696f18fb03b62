import type { ChatTemplate, Engine, GenerateRequest, GeneratedToken, Tokenizer } from '../contracts/engine';
import type { PublishedWeights } from '../contracts/weights';
import { ClawGymError, ErrorCodes, messageOf } from '../errors';
import { ReplicaSet, type Replica } from './replicas';
import { adapterName, sglangCapabilities, sglangLoraSync, sglangSync, versionOf, vllmFullSync, vllmLoraSync, type ControlCall } from './weight-sync';

/** Options of {@link createTokenIdEngine}. */
export interface TokenIdEngineOptions {
  flavor: 'vllm' | 'sglang';
  /** Server root, e.g. `http://127.0.0.1:8000` (no `/v1`). */
  baseUrl?: string;
  /** Several servers of the same model (replicas): rollouts spread over them, each sticking to one. */
  replicas?: readonly string[];
  /** vLLM LoRA: adapters are served as `<loraPrefix>-v<version>` (default `clawgym-policy`). */
  loraPrefix?: string;
  /** Attempts of a replica's weight sync after the first (default 4), with doubling backoff from `syncBackoffMs` (default 500). */
  syncRetries?: number;
  syncBackoffMs?: number;
  /** Longest wait for one control-plane call (a weight load), in ms (default 300000). */
  controlTimeoutMs?: number;
  /** How often a replica marked down is probed (`GET /health`), in ms (default 2000). */
  probeIntervalMs?: number;
  /** Model name sent to vLLM (SGLang's `/generate` serves its one model). */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  name?: string;
  /** The version the servers serve at start (before any weight sync; default 0). */
  policyVersion?: () => number;
  /** Longest wait for the response or for its next bytes, in ms (default 120000). */
  requestTimeoutMs?: number;
  /** Stand-in for the global `fetch`. */
  fetch?: typeof fetch;
  /** The server's context (vLLM's `max_model_len`), when known: see {@link Engine.contextLength}. */
  contextLength?: number;
  /**
   * What the server's logprobs are: `raw` (before temperature/top-p: vLLM's default
   * `--logprobs-mode raw_logprobs`; SGLang with `SGLANG_RETURN_ORIGINAL_LOGPROB=1`) or `processed`
   * (after them: vLLM `--logprobs-mode processed_logprobs`; SGLang's default). Recorded with every
   * call; default: the server's own default (`raw` for vLLM, `processed` for SGLang).
   */
  logprobs?: 'processed' | 'raw';
  /**
   * vLLM full weights: `disk` where the server was built with the disk weight-transfer backend
   * (vLLM PR #52152, unreleased). Released vLLM has no route that loads a folder of full weights,
   * so without it a full-weight sync to vLLM is refused, naming what works.
   */
  vllmFullWeights?: 'disk';
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

/** Where one replica stands: whether it answers, the version it serves, why it was marked down. */
export interface ReplicaStatus { baseUrl: string; healthy: boolean; version: number; lastError?: string }

/** A vLLM/SGLang engine: an {@link Engine} whose replicas can be inspected (metrics, tests). */
export interface TokenIdEngine extends Engine {
  replicas(): ReplicaStatus[];
}

/** Whether a failure says the server is gone or broken (not that this request was bad). */
const serverFault = (status: number | undefined) => status === undefined || status >= 500;

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

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
 *
 * With `replicas`, sessions spread over the servers and stick to one; a server that fails
 * (no connection, 5xx, timeout) is marked down, gets no new sessions, and is probed until it
 * answers, brought to the newest weights first. `syncWeights` loads published weights into every
 * replica (SGLang from disk; vLLM a LoRA adapter or full weights, as `weights.kind` says; see
 * `weight-sync.ts`), retrying with backoff; new calls wait while it runs. Each call's record
 * carries the version the server reported serving it (`policyVersion(sessionId)`).
 */
export function createTokenIdEngine(options: TokenIdEngineOptions): TokenIdEngine {
  const { flavor, model, chatTemplate } = options;
  const urls = [...(options.replicas ?? []), ...(options.baseUrl ? [options.baseUrl] : [])];
  if (urls.length === 0) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${flavor} engine: no server given`, { hint: 'Set engine.options.baseUrl, or engine.options.replicas to a list of base URLs.' });
  const set = new ReplicaSet([...new Set(urls)], options.policyVersion?.() ?? 0);
  const path = flavor === 'vllm' ? '/v1/completions' : '/generate';
  const name = options.name ?? `${flavor}:${model}`;
  const timeoutMs = options.requestTimeoutMs ?? 120_000;
  const controlTimeoutMs = options.controlTimeoutMs ?? 300_000;
  const loraPrefix = options.loraPrefix ?? 'clawgym-policy';
  const doFetch = options.fetch ?? fetch;
  const fail = (url: string, what: string, cause?: unknown) =>
    new ClawGymError(ErrorCodes.ENGINE_FAILED, `${flavor} engine: ${what} (POST ${url})`, { cause });
  /** The version that served each session's latest call. */
  const served = new Map<string, number>();
  /** Replicas serving a LoRA adapter (vLLM): calls name the adapter of the replica's version. */
  const lora = new Set<Replica>();
  let latest: PublishedWeights | undefined;
  let syncing: Promise<void> | undefined;
  let probe: NodeJS.Timeout | undefined;

  const headers = (): Record<string, string> => ({
    'content-type': 'application/json', accept: 'text/event-stream',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  });

  /** The control plane of one replica, with the engine's auth and a time limit per call. */
  const control = (r: Replica): ControlCall => async (method, route, body) => {
    const res = await doFetch(r.baseUrl + route, {
      method, headers: headers(), signal: AbortSignal.timeout(controlTimeoutMs),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text().catch(() => '') };
  };

  /** Load `w` into one replica, with retries; resolves to undefined or to why it failed. */
  async function syncReplica(r: Replica, w: PublishedWeights): Promise<string | undefined> {
    const retries = options.syncRetries ?? 4;
    let why = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep((options.syncBackoffMs ?? 500) * 2 ** (attempt - 1));
      try {
        const call = control(r);
        if (flavor === 'sglang' && w.kind !== 'lora') r.sglang ??= await sglangCapabilities(call);
        const reported = flavor === 'sglang' ? (w.kind === 'lora' ? await sglangLoraSync(call, w, loraPrefix) : await sglangSync(call, w, r.sglang!))
          : w.kind === 'lora' ? await vllmLoraSync(call, w, loraPrefix)
            : await vllmFullSync(call, w, { get initialized() { return r.transferReady; }, set initialized(v) { r.transferReady = v; } });
        if (reported !== undefined && reported !== w.version) {
          why = `it reports serving version ${reported} after loading version ${w.version}`;
          continue; // retried like a failed call
        }
        if (w.kind === 'lora') lora.add(r); else lora.delete(r);
        r.version = w.version;
        return undefined;
      } catch (err) {
        why = errorText(err);
      }
    }
    return `${retries + 1} attempts: ${why}`;
  }

  /** Probe replicas marked down; one that answers is brought to the newest weights, then serves again. */
  function startProbe(): void {
    if (probe) return;
    probe = setInterval(() => {
      const down = set.replicas.filter((r) => !r.healthy);
      if (down.length === 0) { clearInterval(probe); probe = undefined; return; }
      for (const r of down) {
        void (async () => {
          const res = await doFetch(`${r.baseUrl}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
          if (!res?.ok || r.healthy) return;
          if (latest && r.version !== latest.version) {
            const why = await syncReplica(r, latest);
            if (why) { r.lastError = `weight sync on return failed: ${why}`; return; }
          }
          r.healthy = true;
        })();
      }
    }, options.probeIntervalMs ?? 2000);
    probe.unref();
  }

  const markDown = (r: Replica, why: string) => {
    set.markDown(r, why);
    startProbe();
  };

  const requestBody = ({ promptIds, sampling }: GenerateRequest, r: Replica) => {
    const stopIds = [...chatTemplate.stopIds, ...(sampling.stopIds ?? [])];
    if (flavor === 'sglang') {
      return {
        input_ids: [...promptIds], stream: true, return_logprob: true,
        sampling_params: { max_new_tokens: sampling.maxTokens, temperature: sampling.temperature, top_p: sampling.topP, stop_token_ids: stopIds },
        // A LoRA adapter is asked for by the name it was loaded under (GenerateReqInput.lora_path).
        ...(lora.has(r) ? { lora_path: adapterName(loraPrefix, r.version) } : {}),
      };
    }
    return {
      model: lora.has(r) ? adapterName(loraPrefix, r.version) : model,
      prompt: [...promptIds], max_tokens: sampling.maxTokens, temperature: sampling.temperature, top_p: sampling.topP,
      ...(sampling.seed === undefined ? {} : { seed: sampling.seed }),
      stream: true, logprobs: 1, return_token_ids: true, skip_special_tokens: false,
      stop_token_ids: stopIds, include_stop_str_in_output: true,
    };
  };

  /** The version a chunk says served it: SGLang's `meta_info.weight_version`, a vLLM adapter's name. */
  const chunkVersion = (chunk: Json, r: Replica): number | undefined => {
    // An SGLang LoRA adapter leaves the server's weight_version (its base weights') as it was.
    if (flavor === 'sglang') return lora.has(r) ? undefined : versionOf(chunk.meta_info?.weight_version);
    const m = typeof chunk.model === 'string' ? /-v(\d+)$/.exec(chunk.model) : null;
    return m && chunk.model.startsWith(loraPrefix) ? Number(m[1]) : undefined;
  };

  async function* generate(request: GenerateRequest): AsyncGenerator<readonly GeneratedToken[]> {
    const { signal } = request;
    if (syncing) await syncing.catch(() => undefined); // new calls wait for the weights being loaded
    if (signal?.aborted) return;
    const replica = set.pick(request.sessionId);
    if (!replica) {
      throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `${name}: no replica answers (${set.replicas.map((r) => `${r.baseUrl}: ${r.lastError ?? 'down'}`).join('; ')})`, {
        hint: 'Check that the engine servers are running and reachable; ClawGym probes them and uses each again once it answers.',
      });
    }
    const url = replica.baseUrl + path;
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
    let status: number | undefined;
    // The oldest weights any of this call's tokens came from (a sync may land mid-call).
    let version = replica.version;
    try {
      arm();
      const res = await doFetch(url, { method: 'POST', headers: headers(), body: JSON.stringify(requestBody(request, replica)), signal: upstream.signal });
      status = res.status;
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        throw fail(url, `HTTP ${res.status} ${res.statusText}${text ? `: ${text.slice(0, 500)}` : ''}`);
      }
      if (!res.body) throw fail(url, `HTTP ${res.status} with no body`);
      let yielded = 0;
      let finished = false;
      let reported: number | undefined;
      for await (const data of sseData(res.body, arm)) {
        if (data === '[DONE]') continue;
        let chunk: Json;
        try { chunk = JSON.parse(data); } catch { throw fail(url, `malformed chunk: ${data.slice(0, 200)}`); }
        const v = chunkVersion(chunk, replica);
        if (v !== undefined) reported = Math.min(reported ?? v, v);
        const step = flavor === 'vllm' ? parseVllm(chunk) : parseSglang(chunk, yielded);
        finished ||= step.finished;
        if (step.tokens.length) {
          // A chunk's tokens go out as one step, as they came.
          yielded += step.tokens.length;
          clearTimeout(timer); // the consumer's pace is not the server's silence
          yield step.tokens;
          arm();
        }
      }
      if (!finished) { status = undefined; throw fail(url, `stream ended after ${yielded} tokens without a finish reason`); }
      version = reported ?? version;
      complete = true;
    } catch (err) {
      if (signal?.aborted) return; // the client went away: stop quietly, as the contract asks
      if (timedOut) {
        markDown(replica, `no response for ${timeoutMs} ms`);
        throw fail(url, `no response for ${timeoutMs} ms (requestTimeoutMs)`, err);
      }
      // No connection, a 5xx, a cut stream: the server is at fault, so new sessions avoid it.
      // A 4xx or a malformed chunk says nothing about its health.
      if (!(err instanceof WireError) && serverFault(status)) markDown(replica, err instanceof Error ? err.message : errorText(err));
      if (err instanceof ClawGymError) throw err;
      throw fail(url, err instanceof WireError ? err.message : `request failed: ${errorText(err)}`, err);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (!complete) upstream.abort(); // closes the connection when the consumer stopped early
      if (request.sessionId !== undefined) served.set(request.sessionId, version);
      if (served.size > 20_000) served.delete(served.keys().next().value!);
    }
  }

  async function syncWeights(weights?: PublishedWeights): Promise<void> {
    if (!weights) return; // the trainer published nothing: it shares weights with no server
    if (flavor === 'vllm' && weights.kind === 'full' && options.vllmFullWeights !== 'disk') {
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${name}: the trainer publishes full weights (${weights.path}), and released vLLM has no route that loads full weights from a folder (its weight-transfer backends are nccl, ipc and sparse_nccl, sent from the trainer's GPUs; the disk backend is the unreleased PR #52152)`, {
        hint: "Use engine 'sglang' (POST /update_weights_from_disk loads the folder), train a LoRA adapter (trainer loraRank > 0 with a trainer that exports adapters; vLLM then loads it with /v1/load_lora_adapter), or sample on the trainer service (engine 'tinker'). A vLLM built with the disk backend: set engine.options.vllmFullWeights: 'disk'.",
      });
    }
    latest = weights;
    const run = (async () => {
      // The healthy replicas (one that is down is synced by the probe when it answers); when
      // none is, every one: an outage may be over, and the retries give it time to end.
      const healthy = set.replicas.filter((r) => r.healthy);
      const targets = healthy.length ? healthy : set.replicas;
      const results = await Promise.all(targets.map(async (r) => [r, await syncReplica(r, weights)] as const));
      for (const [r, why] of results) {
        if (why) markDown(r, `weight sync of version ${weights.version} failed: ${why}`);
        else r.healthy = true;
      }
      if (!set.replicas.some((r) => r.healthy && r.version === weights.version)) {
        const detail = set.replicas.map((r) => `${r.baseUrl}: ${r.lastError ?? `serves version ${r.version}`}`).join('; ');
        throw new ClawGymError(ErrorCodes.ENGINE_SYNC_FAILED, `${name}: could not load weights version ${weights.version} (${weights.path}) into any replica: ${detail}`, {
          hint: flavor === 'sglang'
            ? 'The SGLang server must read the published folder (same path on its machine) and accept POST /update_weights_from_disk.'
            : weights.kind === 'lora'
              ? 'vLLM needs --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, and must read the adapter folder.'
              : 'vLLM needs VLLM_SERVER_DEV_MODE=1 and --weight-transfer-config \'{"backend":"disk"}\', and must read the published folder.',
        });
      }
    })();
    syncing = run;
    try { await run; } finally { if (syncing === run) syncing = undefined; }
  }

  return {
    name,
    tokenizer: options.tokenizer,
    chatTemplate,
    policyVersion: (sessionId?: string) => (sessionId !== undefined ? served.get(sessionId) : undefined) ?? set.minVersion(),
    logprobs: options.logprobs ?? (flavor === 'sglang' ? 'processed' : 'raw'),
    ...(options.contextLength === undefined ? {} : { contextLength: options.contextLength }),
    generate,
    syncWeights,
    replicas: () => set.replicas.map((r) => ({ baseUrl: r.baseUrl, healthy: r.healthy, version: r.version, ...(r.lastError ? { lastError: r.lastError } : {}) })),
    async close() { clearInterval(probe); probe = undefined; },
  };
}
