import { chmod } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../contracts/engine';
import type { CanonicalMessage } from '../contracts/messages';
import { headOf, type CallHead, type ModelCallRecord, type RecordStore } from '../contracts/records';
import type { FingerprintSource } from '../3-harness/fingerprint/fingerprint';
import { messageOf } from '../errors';
import { answerCall, type CallSettings } from './call';
import { checkArgumentsDepth } from './json-depth';
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_HEADERS_TIMEOUT_MS, readBody } from './read-body';
import { modelsList, sendError, sendJson } from './responses';
import { adapterFor, pathOf, presentedKey, ROUTES, STATUS } from './routes';
import { validateSampling } from './sampling';
import { keyMatches, Sessions, type SessionInfo, type SessionState } from './sessions';
import { anthropicMessages, parseCountTokens } from './wire/anthropic';
import { geminiGenerateContent, geminiRoute } from './wire/gemini';
import { WireError, type WireAdapter } from './wire/types';

export { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_HEADERS_TIMEOUT_MS } from './read-body';

/** Settings of the serving proxy. */
export interface ProxyOptions {
  engine: Engine;
  store: RecordStore;
  runId: string;
  host?: string;
  port?: number;
  /** Model id reported by `/v1/models`. */
  modelName?: string;
  maxBodyBytes?: number;
  /** How long a client may take to send a request's headers (default {@link DEFAULT_HEADERS_TIMEOUT_MS}); then 408 and closed. */
  headersTimeoutMs?: number;
  /** How long a client may take to send a request's body once its headers are in (default {@link DEFAULT_BODY_TIMEOUT_MS}); then 408 and closed. */
  bodyTimeoutMs?: number;
  /** Default and ceiling of generated tokens per call. */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  firstTokenTimeoutMs?: number;
  nextTokenTimeoutMs?: number;
  /** After this many engine failures in a row, a session answers with a non-retryable error. */
  maxConsecutiveFailures?: number;
  /** Called after each record is stored, before the response's final event (`onModelCall`). */
  onRecord?: (record: ModelCallRecord) => Promise<void>;
  /**
   * Told once per session and note how a request feature was handled (a tool left out and why,
   * a reply that missed its schema). Every call's notes are also kept in its record.
   */
  onNote?: (rolloutId: string, note: string) => void;
}

/** What closing a session tells the runner. */
export interface ClosedSession {
  calls: number;
  infraFailure?: string;
  refused?: string;
  /**
   * The main agent's conversation: its last answered request's messages, then the reply the
   * proxy returned. Absent when no main-agent call was answered.
   */
  conversation?: CanonicalMessage[];
}

/**
 * The serving proxy: speaks Anthropic Messages, OpenAI Chat Completions and OpenAI Responses
 * to harnesses, token ids to the engine. Each rollout has a session (`/s/<rolloutId>`, own
 * key, own TITO ledger); every answered call is recorded before its response completes.
 */
export class ServingProxy {
  readonly sessions: Sessions;
  /** What answering a call needs (the engine, like the sessions' template, is the one given). */
  private readonly call: CallSettings;
  private server?: Server;
  private unixServers: Server[] = [];
  private baseUrl = '';
  private readonly o: Required<Omit<ProxyOptions, 'onRecord' | 'onNote'>> & Pick<ProxyOptions, 'onRecord' | 'onNote'>;

  constructor(options: ProxyOptions) {
    this.o = {
      host: '127.0.0.1', port: 0, modelName: 'clawgym-policy', maxBodyBytes: 32 * 1024 * 1024, maxTokens: 4096,
      headersTimeoutMs: DEFAULT_HEADERS_TIMEOUT_MS, bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
      temperature: 1, topP: 1, firstTokenTimeoutMs: 60_000, nextTokenTimeoutMs: 30_000, maxConsecutiveFailures: 2,
      // An option given as undefined keeps its default (callers pass optional settings through).
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    } as typeof this.o;
    this.sessions = new Sessions(options.engine.chatTemplate);
    this.call = { ...this.o, stopIds: new Set(options.engine.chatTemplate.stopIds) };
  }

  /** Start listening; resolves to the root URL (e.g. `http://127.0.0.1:40123`). */
  async start(): Promise<string> {
    const server = this.createHttpServer();
    server.keepAliveTimeout = 65_000;
    server.on('connection', (socket) => socket.setNoDelay(true));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => resolve());
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.baseUrl = `http://${this.o.host}:${port}`;
    return this.baseUrl;
  }

  /**
   * Also listen on a Unix socket (bound into sandboxes whose only network is their own
   * loopback). Same handler, same sessions.
   */
  async listenUnix(socketPath: string): Promise<void> {
    const server = this.createHttpServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    // Sandboxed harnesses run as other users (Docker's uid 1000): let them connect. This opens
    // nothing the loopback listener does not, and every request still needs its session key.
    await chmod(socketPath, 0o666);
    this.unixServers.push(server);
  }

  /**
   * A server whose slow clients are closed within seconds: Node's own header limit, checked every
   * second (its default check runs every 30 s, on a 60 s limit), and the body limit of
   * {@link readBody}. A client that asks before sending its body (`Expect: 100-continue`) and
   * declares one over the limit is refused at once, and never sends it.
   */
  private createHttpServer(): Server {
    const { headersTimeoutMs, bodyTimeoutMs } = this.o;
    const server = createServer({
      headersTimeout: headersTimeoutMs, requestTimeout: headersTimeoutMs + bodyTimeoutMs + 1000,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeoutMs / 2))),
    }, (req, res) => { void this.handle(req, res); });
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > this.o.maxBodyBytes) {
        res.shouldKeepAlive = false;
        sendError(res, adapterFor(pathOf(req.url ?? '/'), req), new WireError(413, 'too_large', `request body of ${declared} bytes is over the limit of ${this.o.maxBodyBytes}`));
        return;
      }
      res.writeContinue();
      void this.handle(req, res);
    });
    return server;
  }

  async stop(): Promise<void> {
    try {
      await Promise.all(this.sessions.all().map((s) => this.sessions.close(s.rolloutId)));
      await this.o.store.closeAll();
    } finally {
      // Listeners closed even when the records cannot be flushed (a full or read-only disk):
      // an open one would keep the process alive after the command failed.
      await this.closeServers();
    }
  }

  private async closeServers(): Promise<void> {
    await Promise.all([this.server, ...this.unixServers].map((server) => new Promise<void>((resolve) => {
      if (!server) { resolve(); return; }
      server.close(() => resolve());
      server.closeAllConnections();
    })));
  }

  /** Open a rollout's session: its base URL and secret key. */
  openSession(rolloutId: string, options: { classify?: SessionState['classify'] } = {}): SessionInfo {
    const s = this.sessions.open(rolloutId, options.classify);
    return { rolloutId, apiKey: s.key, baseUrl: `${this.baseUrl}/s/${rolloutId}` };
  }

  /** When a session's harness first asked for a completion (undefined: not yet, or no such session). */
  firstCallAt(rolloutId: string): number | undefined {
    return this.sessions.get(rolloutId)?.firstCallAt;
  }

  /** The recorded calls of a session, in order. */
  records(rolloutId: string): Promise<ModelCallRecord[]> {
    return this.o.store.read(rolloutId);
  }

  /** The recorded calls of a session one at a time, in order: read in the memory of a few records. */
  async *stream(rolloutId: string): AsyncGenerator<ModelCallRecord> {
    if (this.o.store.stream) yield* this.o.store.stream(rolloutId);
    else yield* await this.o.store.read(rolloutId);
  }

  /** The recorded calls of a session without their prompt ids, in order (what reports and the pool read). */
  async heads(rolloutId: string): Promise<CallHead[]> {
    const out: CallHead[] = [];
    if (this.o.store.heads) for await (const h of this.o.store.heads(rolloutId)) out.push(h);
    else out.push(...(await this.o.store.read(rolloutId)).map(headOf));
    return out;
  }

  /** Close a session once its in-flight calls are recorded; returns its infra failure, if any. */
  async closeSession(rolloutId: string): Promise<ClosedSession> {
    const s = await this.sessions.close(rolloutId);
    await this.o.store.close(rolloutId);
    const last = s?.lastMain;
    if (s) s.lastMain = undefined; // returned once; the session holds no history after it closed
    return {
      calls: s?.nextCall ?? 0, infraFailure: s?.infraFailure, ...(s?.refused ? { refused: s.refused } : {}),
      ...(last ? { conversation: [...last.messages, last.reply] } : {}),
    };
  }

  /** Calls of a session answered as a success, each recorded first (a call that could not be recorded is answered with an error). */
  answeredCalls(rolloutId: string): number {
    return this.sessions.get(rolloutId)?.answered ?? 0;
  }

  /** The system prompt and tools of a session's first main call (what a harness fingerprint is taken from), once it made one. */
  firstMainCall(rolloutId: string): FingerprintSource | undefined {
    return this.sessions.get(rolloutId)?.firstMain;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = pathOf(req.url ?? '/');
    let adapter = adapterFor(pathname, req);
    // The session whose key this request presented: from then on a refusal or a failure is that rollout's.
    let authenticated: SessionState | undefined;
    try {
      const m = /^\/s\/([^/]+)(\/.*)?$/.exec(pathname);
      const rest = m?.[2] ?? '/';
      if (req.method === 'HEAD' && (rest === '/' || rest === '/api/hello')) {
        // Claude Code's preflight; answered without a session check, and leaking nothing.
        res.writeHead(200).end();
        return;
      }
      if (!m) throw new WireError(404, 'not_found', `no route ${req.method} ${pathname}: use the session base URL /s/<rolloutId>`);
      const session = this.sessions.get(m[1]!);
      if (!session) throw new WireError(404, 'not_found', `unknown session "${m[1]}"`);
      if (session.closed) throw new WireError(410, 'gone', `session "${m[1]}" is closed`);
      if (!keyMatches(presentedKey(req), session.key)) throw new WireError(401, 'authentication', 'invalid or missing API key for this session');
      authenticated = session;

      if (req.method === 'GET' && rest === '/v1/models') {
        sendJson(res, 200, modelsList(req, this.o.modelName));
        return;
      }
      if (req.method === 'POST' && rest === '/v1/messages/count_tokens') {
        adapter = anthropicMessages;
        const parsed = parseCountTokens(await this.readJson(req, session, adapter));
        sendJson(res, 200, { input_tokens: this.o.engine.chatTemplate.render(parsed.conversation).length });
        return;
      }
      const gemini = req.method === 'POST' ? geminiRoute(rest) : undefined;
      const route = req.method === 'POST' ? ROUTES[rest] ?? (gemini ? geminiGenerateContent : undefined) : undefined;
      if (!route) throw new WireError(404, 'not_found', `no route ${req.method} ${rest}`);
      session.firstCallAt ??= Date.now();
      adapter = route;
      let parsed = adapter.parse(await this.readJson(req, session, adapter), session.parsed);
      if (gemini?.method === 'countTokens') {
        sendJson(res, 200, { totalTokens: this.o.engine.chatTemplate.render(parsed.conversation).length });
        return;
      }
      // Gemini names the model and whether to stream in the path, not the body.
      if (gemini) parsed = { ...parsed, model: gemini.model, stream: gemini.method === 'streamGenerateContent' };
      checkArgumentsDepth(parsed.conversation, session.checked);
      session.checked = parsed.conversation.messages;
      validateSampling(parsed, adapter.format);
      if (session.consecutiveFailures >= this.o.maxConsecutiveFailures) {
        throw new WireError(400, 'invalid_request', `the engine or proxy failed ${session.consecutiveFailures} times in a row for this rollout; it is marked as an infrastructure failure (${session.infraFailure})`);
      }
      const done = answerCall(this.call, session, adapter, parsed, res);
      session.inFlight.add(done);
      try { await done; } finally { session.inFlight.delete(done); }
    } catch (err) {
      if (authenticated) this.account(authenticated, err);
      sendError(res, adapter, err);
    }
  }

  /**
   * Charge an error raised outside generation to its session. The proxy's own failures (5xx:
   * an exception while parsing, rendering or recording) count like engine failures: they set
   * the infra flag and count toward `maxConsecutiveFailures`. A refusal (4xx) is remembered,
   * so that a harness which dies of it is an infra failure, never a reward-0 rollout — except a
   * conversation that outgrew the model's context: that is the policy's doing, and dropping such
   * rollouts would hide from training every rollout that ran too long.
   */
  private account(session: SessionState, err: unknown): void {
    if (err instanceof WireError && err.byPolicy) return;
    const status = err instanceof WireError ? err.status || STATUS[err.kind] : 500;
    const message = `${status}: ${messageOf(err)}`;
    if (status >= 500) {
      session.consecutiveFailures++;
      session.infraFailure ??= `the proxy failed a request: ${message}`;
    } else session.refused ??= message;
  }

  /** The body as JSON, read with what the session's previous bodies already held (see request-json.ts). */
  private async readJson(req: IncomingMessage, session: SessionState, adapter: WireAdapter): Promise<unknown> {
    return session.json.parse(await readBody(req, this.o.maxBodyBytes, this.o.bodyTimeoutMs), adapter.historyKey);
  }
}
