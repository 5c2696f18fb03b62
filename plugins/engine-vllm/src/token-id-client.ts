import { ClawGymError, ErrorCodes, type ChatTemplate, type Engine, type Tokenizer } from '@clawgym/core';
import { ReplicaSet, type Replica } from './replicas';
import { Failover } from './token-id/failover';
import { sglangWire } from './token-id/sglang-wire';
import { streamTokens, type StreamContext } from './token-id/stream';
import { vllmWire } from './token-id/vllm-wire';
import { ReplicaWeights } from './token-id/weights';
import type { ControlCall } from './weight-sync';

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

/** Where one replica stands: whether it answers, the version it serves, why it was marked down. */
export interface ReplicaStatus { baseUrl: string; healthy: boolean; version: number; lastError?: string }

/** A vLLM/SGLang engine: an {@link Engine} whose replicas can be inspected (metrics, tests). */
export interface TokenIdEngine extends Engine {
  replicas(): ReplicaStatus[];
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
  const name = options.name ?? `${flavor}:${model}`;
  const controlTimeoutMs = options.controlTimeoutMs ?? 300_000;
  const loraPrefix = options.loraPrefix ?? 'clawgym-policy';
  const doFetch = options.fetch ?? fetch;
  const wire = flavor === 'vllm' ? vllmWire(model, loraPrefix) : sglangWire();
  /** The version that served each session's latest call. */
  const served = new Map<string, number>();

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

  const failover: Failover = new Failover(set, { name, fetch: doFetch, probeIntervalMs: options.probeIntervalMs ?? 2000, revive: (r) => replicaWeights.revive(r) });
  const replicaWeights = new ReplicaWeights(set, {
    flavor, name, loraPrefix, retries: options.syncRetries ?? 4, backoffMs: options.syncBackoffMs ?? 500,
    ...(options.vllmFullWeights ? { vllmFullWeights: options.vllmFullWeights } : {}),
    control, markDown: (r, why) => failover.markDown(r, why),
  });
  const stream: StreamContext = {
    wire, failover, weights: replicaWeights, fetch: doFetch, headers, stopIds: () => chatTemplate.stopIds,
    timeoutMs: options.requestTimeoutMs ?? 120_000,
    fail: (url, what, cause) => new ClawGymError(ErrorCodes.ENGINE_FAILED, `${flavor} engine: ${what} (POST ${url})`, { cause }),
    served: (sessionId, version) => {
      served.set(sessionId, version);
      if (served.size > 20_000) served.delete(served.keys().next().value!);
    },
  };

  return {
    name,
    tokenizer: options.tokenizer,
    chatTemplate,
    policyVersion: (sessionId?: string) => (sessionId !== undefined ? served.get(sessionId) : undefined) ?? set.minVersion(),
    logprobs: options.logprobs ?? wire.logprobs,
    ...(options.contextLength === undefined ? {} : { contextLength: options.contextLength }),
    generate: (request) => streamTokens(stream, request),
    syncWeights: (weights) => replicaWeights.sync(weights),
    replicas: () => set.replicas.map((r) => ({ baseUrl: r.baseUrl, healthy: r.healthy, version: r.version, ...(r.lastError ? { lastError: r.lastError } : {}) })),
    async close() { failover.close(); },
  };
}
