import { ClawGymError, type GenerateRequest, type GeneratedToken } from '@clawgym/core';
import type { Failover } from './failover';
import { serverFault } from './failover';
import { sglangAppliesSeed } from './sglang-seed';
import { EngineChunkError, errorText, sseData, type Json } from './sse';
import type { ReplicaWeights } from './weights';
import type { TokenIdWire } from './wire';

/** What one streamed call needs of its engine. */
export interface StreamContext {
  wire: TokenIdWire;
  failover: Failover;
  weights: ReplicaWeights;
  fetch: typeof fetch;
  headers(): Record<string, string>;
  /** Stop ids of the chat template (the request's own come on top). */
  stopIds(): readonly number[];
  /** Longest wait for the response or for its next bytes, in ms. */
  timeoutMs: number;
  /** The error for a failed call, naming flavor and URL. */
  fail(url: string, what: string, cause?: unknown): ClawGymError;
  /** Records the version that served a session's latest call. */
  served(sessionId: string, version: number): void;
}

/**
 * One call, streamed: the replica its session sticks to, the request with our prompt ids, each
 * chunk's tokens yielded as they arrive. A replica that fails (no connection, 5xx, timeout) is
 * marked down; the abort of `request.signal` ends the stream quietly.
 */
export async function* streamTokens(ctx: StreamContext, request: GenerateRequest): AsyncGenerator<readonly GeneratedToken[]> {
  const { signal } = request;
  await ctx.weights.settled(); // new calls wait for the weights being loaded
  if (signal?.aborted) return;
  const replica = ctx.failover.pick(request.sessionId);
  const url = replica.baseUrl + ctx.wire.path;
  const upstream = new AbortController();
  const onAbort = () => upstream.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { timedOut = true; upstream.abort(); }, ctx.timeoutMs);
  };
  let complete = false;
  let status: number | undefined;
  // The oldest weights any of this call's tokens came from (a sync may land mid-call).
  let version = replica.version;
  try {
    arm();
    const adapter = ctx.weights.adapter(replica);
    if (ctx.wire.seedProbe && request.sampling.seed !== undefined && replica.sglangSeed === undefined) {
      replica.sglangSeed = await sglangAppliesSeed(ctx.fetch, replica.baseUrl, ctx.headers(), ctx.timeoutMs);
    }
    const body = ctx.wire.body(request, [...ctx.stopIds(), ...(request.sampling.stopIds ?? [])], adapter, replica.sglangSeed === true);
    const res = await ctx.fetch(url, { method: 'POST', headers: ctx.headers(), body: JSON.stringify(body), signal: upstream.signal });
    status = res.status;
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw ctx.fail(url, `HTTP ${res.status} ${res.statusText}${text ? `: ${text.slice(0, 500)}` : ''}`);
    }
    if (!res.body) throw ctx.fail(url, `HTTP ${res.status} with no body`);
    let yielded = 0;
    let finished = false;
    let reported: number | undefined;
    for await (const data of sseData(res.body, arm)) {
      if (data === '[DONE]') continue;
      let chunk: Json;
      try { chunk = JSON.parse(data); } catch { throw ctx.fail(url, `malformed chunk: ${data.slice(0, 200)}`); }
      const v = ctx.wire.version(chunk, ctx.weights.adapter(replica));
      if (v !== undefined) reported = Math.min(reported ?? v, v);
      const step = ctx.wire.parse(chunk, yielded);
      finished ||= step.finished;
      if (step.tokens.length) {
        // A chunk's tokens go out as one step, as they came.
        yielded += step.tokens.length;
        clearTimeout(timer); // the consumer's pace is not the server's silence
        yield step.tokens;
        arm();
      }
    }
    if (!finished) { status = undefined; throw ctx.fail(url, `stream ended after ${yielded} tokens without a finish reason`); }
    version = reported ?? version;
    complete = true;
  } catch (err) {
    if (signal?.aborted) return; // the client went away: stop quietly, as the contract asks
    if (timedOut) {
      ctx.failover.markDown(replica, `no response for ${ctx.timeoutMs} ms`);
      throw ctx.fail(url, `no response for ${ctx.timeoutMs} ms (requestTimeoutMs)`, err);
    }
    // No connection, a 5xx, a cut stream: the server is at fault, so new sessions avoid it.
    // A 4xx or a malformed chunk says nothing about its health.
    if (!(err instanceof EngineChunkError) && serverFault(status)) ctx.failover.markDown(replica, err instanceof Error ? err.message : errorText(err));
    if (err instanceof ClawGymError) throw err;
    throw ctx.fail(url, err instanceof EngineChunkError ? err.message : `request failed: ${errorText(err)}`, err);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    if (!complete) upstream.abort(); // closes the connection when the consumer stopped early
    if (request.sessionId !== undefined) ctx.served(request.sessionId, version);
  }
}
