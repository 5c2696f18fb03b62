import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf } from '@clawgym/core';
import { AuthRefused, TinkerAuth } from './auth';
import type { WireFuture } from './wire';

/** How hard a call to the service is retried before the run stops. */
export interface RetryOptions {
  /** Tries of one request in all (default 6). */
  attempts: number;
  /** First wait between tries, doubled each time up to `maxDelayMs` (default 500 ms, 8 s). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest wait for one response (default 120 s): a slower one counts as a failed try. */
  requestTimeoutMs: number;
  /** Longest wait for a future's result, across `retrieve_future` polls (default 30 min). */
  futureTimeoutMs: number;
}

export const defaultRetry: RetryOptions = { attempts: 6, baseDelayMs: 500, maxDelayMs: 8000, requestTimeoutMs: 120_000, futureTimeoutMs: 30 * 60_000 };

/** Statuses worth another try: the service is busy, restarting or timed out. */
export const transient = (status: number) => status === 408 || status === 429 || status >= 500;

/** Longer than SkyRL's RETRIEVE_FUTURE_TIMEOUT_SECONDS (300, `skyrl/tinker/api.py`). */
const RETRIEVE_WAIT_MS = 330_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A failed HTTP exchange, with the status when there was one. */
export class HttpFailure extends Error {
  constructor(message: string, readonly status?: number, readonly detail?: string) { super(message); }
}

/** The error text of an answer: FastAPI's `{detail}` (a string, or a list of validation errors). */
function detailOf(text: string): string {
  try {
    const j = JSON.parse(text) as { detail?: unknown };
    if (typeof j.detail === 'string') return j.detail;
    if (j.detail !== undefined) return JSON.stringify(j.detail);
  } catch { /* not JSON */ }
  return text.slice(0, 500);
}

/**
 * JSON over HTTP to a Tinker-API service with retries: connection failures, timeouts and
 * 408/429/5xx are retried with exponential backoff; other 4xx answers are the request's fault
 * and fail at once. Every failure that reaches the caller is a coded error naming the URL.
 */
export class TinkerHttp {
  /** The credential requests carry: the API key, or the JWT the service exchanged it for (`auth.ts`). */
  readonly auth: TinkerAuth;

  constructor(
    readonly baseUrl: string,
    apiKey: string | undefined,
    readonly retry: RetryOptions = defaultRetry,
    private readonly fetchImpl: typeof fetch = fetch,
    now: () => number = Date.now,
  ) {
    this.auth = new TinkerAuth(apiKey, (route, body, key) => this.exchange(route, body, key), now);
  }

  private url(route: string): string {
    return `${this.baseUrl.replace(/\/+$/, '')}${route}`;
  }

  /** Hosted Tinker reads the credential from X-API-Key; proxies in front of SkyRL commonly want a bearer token. */
  private static authHeaders(credential: string | undefined): Record<string, string> {
    return credential ? { 'x-api-key': credential, authorization: `Bearer ${credential}` } : {};
  }

  /**
   * A request of the key exchange (`client/config`, `auth/token`), sent with the key itself:
   * retried while the failure is transient; a refusal is handed back as its status.
   */
  private async exchange(route: string, body: unknown, key: string): Promise<{ status: number; json?: unknown }> {
    let delay = this.retry.baseDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return { status: 200, json: await this.raw('POST', route, body, this.retry.requestTimeoutMs, key) };
      } catch (e) {
        const f = e as HttpFailure;
        if (f.status !== undefined && !transient(f.status)) return { status: f.status, json: { detail: f.detail } };
        if (attempt >= this.retry.attempts) throw f;
        await sleep(delay);
        delay = Math.min(this.retry.maxDelayMs, delay * 2);
      }
    }
  }

  private async once(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown, timeoutMs = this.retry.requestTimeoutMs): Promise<unknown> {
    return this.raw(method, route, body, timeoutMs, await this.auth.credential());
  }

  private async raw(method: 'GET' | 'POST' | 'DELETE', route: string, body: unknown, timeoutMs: number, credential: string | undefined): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json', ...TinkerHttp.authHeaders(credential) };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(route), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      const { cause } = (e ?? {}) as { cause?: unknown };
      throw new HttpFailure(`${messageOf(e)}${cause ? ` (${messageOf(cause)})` : ''}`);
    }
    const text = await res.text().catch((e) => { throw new HttpFailure(`reading the answer: ${messageOf(e)}`); });
    if (!res.ok) throw new HttpFailure(`HTTP ${res.status}: ${detailOf(text)}`, res.status, detailOf(text));
    if (res.status === 204) return undefined; // a DELETE's answer: no content
    try { return JSON.parse(text); } catch { throw new HttpFailure(`answer is not JSON: ${text.slice(0, 200)}`, res.status); }
  }

  private fail(method: string, route: string, tries: number, last: HttpFailure): ClawGymError {
    const url = this.url(route);
    const refused = last.status === undefined;
    return new ClawGymError(ErrorCodes.TRAINER_SERVICE, `Tinker service ${method} ${url} failed${tries > 1 ? ` after ${tries} tries` : ''}: ${last.message}`, {
      cause: last,
      hint: refused || transient(last.status!)
        ? `Check that the service runs at ${this.baseUrl} (curl ${this.url('/api/v1/healthz')}) and its log; a restarted service has lost its models: restart it, then \`clawgym run --resume\`.`
        : last.status === 404
          ? `The service does not know this model or future (it restarted, or the id is another server's): \`clawgym run --resume\` creates a model there and loads the last checkpoint.`
          : `The service refused the request: check the config's trainer/engine options (baseModel, loraRank) against what the service at ${this.baseUrl} serves.`,
    });
  }

  /** The service refused the API key at the exchange. */
  private refused(e: AuthRefused): ClawGymError {
    return new ClawGymError(ErrorCodes.TRAINER_SERVICE, `Tinker service at ${this.baseUrl} refused the API key: ${e.message}`, {
      cause: e,
      hint: 'Check trainer.options.apiKey / engine.options.apiKey (hosted Tinker keys start with tml-) and that it belongs to this service.',
    });
  }

  /** One request, retried while the failure is transient. */
  async call<T>(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown, timeoutMs?: number, attempts = this.retry.attempts): Promise<T> {
    let delay = this.retry.baseDelayMs;
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.once(method, route, body, timeoutMs)) as T;
      } catch (e) {
        if (e instanceof AuthRefused) throw this.refused(e);
        if (e instanceof ClawGymError) throw e; // refused before sending (auth.ts)
        const f = e as HttpFailure;
        // A JWT the service no longer takes (revoked, clocks apart): exchange the key again, once.
        if (f.status === 401 && !renewed && await this.auth.exchanges()) { renewed = true; this.auth.invalidate(); attempt--; continue; }
        const retriable = f.status === undefined || transient(f.status);
        if (!retriable || attempt >= attempts) throw this.fail(method, route, attempt, f);
        await sleep(delay);
        delay = Math.min(this.retry.maxDelayMs, delay * 2);
      }
    }
  }

  post<T>(route: string, body: unknown): Promise<T> { return this.call<T>('POST', route, body); }

  /**
   * Download `route` (redirects followed, as SkyRL's checkpoint `archive` answers 302 to its
   * `download`) into `file`, written beside it and renamed; retried as `call` is.
   */
  async download(route: string, file: string): Promise<void> {
    let delay = this.retry.baseDelayMs;
    for (let attempt = 1; ; attempt++) {
      let failure: HttpFailure;
      try {
        const res = await this.fetchImpl(this.url(route), { headers: TinkerHttp.authHeaders(await this.auth.credential()), signal: AbortSignal.timeout(this.retry.futureTimeoutMs) });
        if (res.ok) {
          const bytes = Buffer.from(await res.arrayBuffer());
          await mkdir(dirname(file), { recursive: true });
          await writeFile(`${file}.partial`, bytes);
          await rename(`${file}.partial`, file);
          return;
        }
        const text = await res.text().catch(() => '');
        failure = new HttpFailure(`HTTP ${res.status}: ${detailOf(text)}`, res.status, detailOf(text));
      } catch (e) {
        if (e instanceof AuthRefused) throw this.refused(e);
        if (e instanceof ClawGymError) throw e;
        failure = new HttpFailure(messageOf(e));
      }
      // 425: the checkpoint is still being written (SkyRL's validate_checkpoint): worth waiting for.
      const retriable = failure.status === undefined || failure.status === 425 || transient(failure.status);
      if (!retriable || attempt >= this.retry.attempts) throw this.fail('GET', route, attempt, failure);
      await sleep(delay);
      delay = Math.min(this.retry.maxDelayMs, delay * 2);
    }
  }

  get<T>(route: string): Promise<T> { return this.call<T>('GET', route); }

  /**
   * The result of a future: `retrieve_future` until it is done. A 408 means "not yet" (the server
   * waited its limit), and polling goes on until `futureTimeoutMs`; a 400 is the operation's own
   * error, raised at once.
   */
  async result<T>(future: WireFuture, what: string): Promise<T> {
    const deadline = Date.now() + this.retry.futureTimeoutMs;
    for (;;) {
      try {
        // SkyRL holds a retrieve_future up to 300 s before its 408: wait longer than that for the answer.
        return await this.call<T>('POST', '/api/v1/retrieve_future', { request_id: future.request_id }, Math.max(this.retry.requestTimeoutMs, RETRIEVE_WAIT_MS));
      } catch (e) {
        const cause = (e as ClawGymError).cause as HttpFailure | undefined;
        if (cause?.status === 408 && Date.now() < deadline) continue;
        if (cause?.status === 400) {
          throw new ClawGymError(ErrorCodes.TRAINER_SERVICE, `Tinker service at ${this.baseUrl}: ${what} (request ${future.request_id}) failed: ${cause.detail}`, { cause: e, hint: 'The service ran the request and it failed there: its log has the details.' });
        }
        throw e;
      }
    }
  }
}
