import { chmod } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine, FinishReason, OutputEvent } from '../contracts/engine';
import type { CanonicalMessage } from '../contracts/messages';
import { isSideCall, type ModelCallRecord } from '../contracts/records';
import { fingerprintSource, type FingerprintSource } from '../3-harness/fingerprint/fingerprint';
import { messageOf } from '../errors';
import { randomHex } from '../util/random-hex';
import type { RecordStore } from '../contracts/records';
import { eventsToMessage } from './engine/output';
import { drainTokens } from './generate';
import { checkArgumentsDepth } from './json-depth';
import { validateSampling } from './sampling';
import { checkSchema, classifyCall, withSchemaInstruction } from './request-features';
import { keyMatches, Sessions, type SessionInfo, type SessionState } from './sessions';
import { anthropicMessages, parseCountTokens } from './wire/anthropic';
import { geminiGenerateContent, geminiRoute } from './wire/gemini';
import { openAiChat } from './wire/openai-chat';
import { openAiResponses } from './wire/openai-responses';
import { WireError, type ErrorKind, type ParsedRequest, type SseSink, type WireAdapter } from './wire/types';

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

const ROUTES: Record<string, WireAdapter> = {
  '/v1/messages': anthropicMessages,
  '/v1/chat/completions': openAiChat,
  '/v1/responses': openAiResponses,
};

/** Response ids' prefixes, as each API's own ids read. */
const ID_PREFIX: Record<WireAdapter['format'], string> = { 'anthropic-messages': 'msg', 'openai-chat': 'chatcmpl', 'openai-responses': 'resp', 'gemini-generate-content': 'gen' };

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400, authentication: 401, not_found: 404, gone: 410, too_large: 413, engine: 500, overloaded: 529,
};

/** Pick the error shape a client expects before its route is known. */
function adapterFor(path: string, req: IncomingMessage): WireAdapter {
  if (path.includes('/messages') || req.headers['anthropic-version']) return anthropicMessages;
  if (path.includes('/responses')) return openAiResponses;
  if (geminiRoute(path.replace(/^\/s\/[^/]+/, ''))) return geminiGenerateContent;
  return openAiChat;
}

function presentedKey(req: IncomingMessage): string | undefined {
  const x = req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
  if (typeof x === 'string' && x) return x;
  // Gemini clients may pass the key in the query instead (`?key=`).
  if (req.url?.includes('key=')) { const k = new URL(req.url, 'http://proxy').searchParams.get('key'); if (k) return k; }
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined;
}

/**
 * A request target the URL parser would give back unchanged: letters, digits, `_`, `-` and `/`
 * only, not starting `//` (which it reads as a host).
 */
const PLAIN_PATH = /^\/(?!\/)[\w/-]*$/;

/** The path of a request target, as `new URL(target, base).pathname` gives it (parsed only when it is not plain). */
function pathOf(target: string): string {
  return PLAIN_PATH.test(target) ? target : new URL(target, 'http://proxy').pathname;
}

/**
 * A call's abort: a flag, and an AbortSignal made only when an engine asks for one (most calls
 * never abort). A signal made after the abort is made aborted.
 */
class LazyAbort {
  aborted = false;
  private controller?: AbortController;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.controller?.abort();
  }
}

/** Defaults of the connection limits: a slow or stalled client is closed within seconds. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * Drop the rest of a refused body without keeping it: the answer went out first, and the
 * connection stays usable for a client that finishes sending; one that has not within
 * `timeoutMs` is closed.
 */
function discardRest(req: IncomingMessage, timeoutMs: number): void {
  const timer = setTimeout(() => req.socket.destroy(), timeoutMs);
  timer.unref();
  req.removeAllListeners('data');
  req.on('data', () => undefined);
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * The body, in one buffer of the declared length where there is one (no chunks plus their
 * concatenation: one copy of the body, not two). A declared length over the limit is refused
 * before a byte of the body is read; a body that turns out longer than declared or than the
 * limit is refused as it crosses it; one not complete within `timeoutMs` is a 408.
 */
function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const header = req.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    if (declared !== undefined && declared > limit) {
      discardRest(req, timeoutMs);
      reject(new WireError(413, 'too_large', `request body of ${declared} bytes is over the limit of ${limit}`));
      return;
    }
    const whole = declared !== undefined && Number.isSafeInteger(declared) ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: WireError) => { settled = true; clearTimeout(timer); chunks.length = 0; discardRest(req, timeoutMs); reject(err); };
    const timer = setTimeout(() => {
      if (settled) return;
      fail(new WireError(408, 'invalid_request', `the request body did not arrive within ${timeoutMs} ms (${size} of ${declared ?? 'unknown'} bytes)`));
    }, timeoutMs);
    timer.unref();
    req.on('data', (c: Buffer) => {
      if (settled) return;
      const cap = whole ? whole.length : limit;
      if (size + c.length > cap) { fail(new WireError(413, 'too_large', `request body is over the limit of ${limit} bytes`)); return; }
      if (whole) c.copy(whole, size); else chunks.push(c);
      size += c.length;
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (whole) resolve(size === whole.length ? whole : whole.subarray(0, size));
      // A body that came in one chunk is that chunk (no copy of tens of kilobytes per call).
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', (err) => { if (!settled) { settled = true; clearTimeout(timer); reject(err); } });
  });
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
  /** The engine's template's stop ids (the engine, like the sessions' template, is the one given). */
  private readonly stopIds: ReadonlySet<number>;
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
    this.stopIds = new Set(options.engine.chatTemplate.stopIds);
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
        this.sendError(res, adapterFor(pathOf(req.url ?? '/'), req), new WireError(413, 'too_large', `request body of ${declared} bytes is over the limit of ${this.o.maxBodyBytes}`));
        return;
      }
      res.writeContinue();
      void this.handle(req, res);
    });
    return server;
  }

  async stop(): Promise<void> {
    await Promise.all(this.sessions.all().map((s) => this.sessions.close(s.rolloutId)));
    await this.o.store.closeAll();
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
        this.sendJson(res, 200, this.models(req));
        return;
      }
      if (req.method === 'POST' && rest === '/v1/messages/count_tokens') {
        adapter = anthropicMessages;
        const parsed = parseCountTokens(await this.readJson(req, session, adapter));
        this.sendJson(res, 200, { input_tokens: this.o.engine.chatTemplate.render(parsed.conversation).length });
        return;
      }
      const gemini = req.method === 'POST' ? geminiRoute(rest) : undefined;
      const route = req.method === 'POST' ? ROUTES[rest] ?? (gemini ? geminiGenerateContent : undefined) : undefined;
      if (!route) throw new WireError(404, 'not_found', `no route ${req.method} ${rest}`);
      session.firstCallAt ??= Date.now();
      adapter = route;
      let parsed = adapter.parse(await this.readJson(req, session, adapter), session.parsed);
      if (gemini?.method === 'countTokens') {
        this.sendJson(res, 200, { totalTokens: this.o.engine.chatTemplate.render(parsed.conversation).length });
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
      const done = this.generate(session, adapter, parsed, req, res);
      session.inFlight.add(done);
      try { await done; } finally { session.inFlight.delete(done); }
    } catch (err) {
      if (authenticated) this.account(authenticated, err);
      this.sendError(res, adapter, err);
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

  private async generate(session: SessionState, adapter: WireAdapter, parsed: ParsedRequest, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const engine = this.o.engine;
    const receivedAt = Date.now();
    const conversation = parsed.responseSchema ? withSchemaInstruction(parsed.conversation, parsed.responseSchema) : parsed.conversation;
    const prepared = session.ledger.prepare(conversation);
    // A prompt the model cannot read whole is refused before anything is generated, with the
    // message the Anthropic API gives (vLLM refuses too): reading only its tail would make the
    // record claim ids the engine never saw. A refused call is neither recorded nor an engine failure.
    const context = engine.contextLength;
    if (context !== undefined && prepared.promptIds.length >= context) {
      throw new WireError(400, 'invalid_request', `prompt is too long: ${prepared.promptIds.length} tokens > ${context - 1} maximum (the model's context is ${context} tokens, output included)`, true);
    }
    const callIndex = session.nextCall++;
    // The output is capped at the room the context leaves, and reported as cut ('length') when it fills it.
    const room = context === undefined ? Infinity : context - prepared.promptIds.length;
    const maxTokens = Math.min(parsed.maxTokens ?? this.o.maxTokens, this.o.maxTokens, room);
    const meta = {
      id: `${ID_PREFIX[adapter.format]}_${randomHex(12)}`,
      model: parsed.model, created: Math.floor(receivedAt / 1000), promptTokens: prepared.promptIds.length, includeUsage: parsed.includeUsage,
      ...(parsed.omitThinking ? { omitThinking: true } : {}),
    };
    const abort = new LazyAbort();
    res.on('close', () => { if (!res.writableFinished) abort.abort(); });

    let sink: SseSink | undefined;
    let responder: ReturnType<WireAdapter['stream']> | undefined;
    if (parsed.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      res.flushHeaders();
      sink = {
        send: (event, data) => { res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`); },
        sendRaw: (data) => { res.write(`data: ${data}\n\n`); },
      };
      responder = adapter.stream(sink, meta);
      responder.begin();
    }

    const temperature = parsed.temperature ?? this.o.temperature;
    const topP = parsed.topP ?? this.o.topP;
    const parser = engine.chatTemplate.streamParser(parsed.conversation.tools);
    const events: OutputEvent[] = [];
    const outputIds: number[] = [];
    const logprobs: number[] = [];
    let firstTokenAt: number | undefined;
    let stoppedOnToken = false;
    let failure: string | undefined;
    const emit = (evs: OutputEvent[]) => { for (const e of evs) { events.push(e); responder?.event(e); } };
    /** The ids to parse: all but the stop id. */
    const generated = () => (stoppedOnToken ? outputIds.length - 1 : outputIds.length);
    // The ids the parser has been given. A streamed response parses each token as it comes (its
    // events go out at once); a JSON one, whose events nobody sees before the end, parses them
    // all once generation stops: the same calls in the same order, in one loop instead of
    // between the waits for the engine, where each of them ran with nothing of it in the cache.
    let handed = 0;
    let parserFailed = false;
    const parseTo = (n: number) => {
      try {
        if (!responder && parser.pushMany && n > handed) { emit(parser.pushMany(outputIds.slice(handed, n))); handed = n; }
        for (; handed < n; handed++) emit(parser.push(outputIds[handed]!));
      } catch (err) { parserFailed = true; throw err; }
    };
    try {
      await drainTokens(engine, {
        promptIds: prepared.promptIds, sessionId: session.rolloutId, get signal() { return abort.signal; },
        sampling: { maxTokens, temperature, topP },
      }, this.o.firstTokenTimeoutMs, this.o.nextTokenTimeoutMs, () => abort.abort(), (t) => {
        firstTokenAt ??= Date.now();
        outputIds.push(t.tokenId);
        logprobs.push(t.logprob);
        if (this.stopIds.has(t.tokenId)) { stoppedOnToken = true; return false; }
        if (responder) parseTo(outputIds.length);
        return outputIds.length < maxTokens && !abort.aborted;
      });
      parseTo(generated());
      emit(parser.end());
    } catch (err) {
      failure = messageOf(err);
      // The engine failed: what it generated before is parsed, as it was while streaming.
      if (!parserFailed) { try { parseTo(generated()); } catch { /* the failure stands */ } }
    }

    const clientGone = abort.aborted && failure === undefined;
    const reply = eventsToMessage(events);
    const finishReason: FinishReason = failure ? 'error' : clientGone ? 'aborted'
      : reply.parts.some((p) => p.type === 'tool_call') ? 'tool_calls' : stoppedOnToken ? 'stop' : outputIds.length >= maxTokens ? 'length' : 'stop';
    const notes = [...(parsed.notes ?? [])];
    if (parsed.responseSchema && !failure && !clientGone) notes.push(checkSchema(reply, parsed.responseSchema));
    const role = classifyCall(session, parsed);
    if (!session.firstMain && !isSideCall(role)) session.firstMain = fingerprintSource(parsed.conversation);
    const record: ModelCallRecord = {
      runId: this.o.runId, rolloutId: session.rolloutId, callIndex, wireFormat: adapter.format, requestedModel: parsed.model,
      promptIds: prepared.promptIds, outputIds, outputLogprobs: logprobs, finishReason, origin: prepared.origin, drift: prepared.drift,
      sampling: { temperature, topP, logprobs: engine.logprobs ?? 'unknown' },
      policyVersion: engine.policyVersion(session.rolloutId), timings: { receivedAt, firstTokenAt, finishedAt: Date.now() },
      ...(role ? { role } : {}),
      lineage: session.lineages.assign(callIndex, prepared.origin, role),
      ...(notes.length ? { notes } : {}),
    };
    for (const n of notes) {
      if (session.logged.has(n)) continue;
      session.logged.add(n);
      this.o.onNote?.(session.rolloutId, n);
    }
    try {
      await this.o.store.append(record);
      await this.o.onRecord?.(record);
    } catch (err) {
      failure ??= `could not record the call: ${messageOf(err)}`;
    }

    if (failure) {
      prepared.failed(callIndex);
      session.consecutiveFailures++;
      session.infraFailure ??= failure;
      if (responder) { responder.fail(failure); res.end(); }
      else this.sendError(res, adapter, new WireError(500, 'engine', failure));
      return;
    }
    session.consecutiveFailures = 0;
    if (clientGone) { prepared.failed(callIndex); res.end(); return; }
    // Only answered calls enter the ledger; the ledger's ending tells the template whether <|im_end|> was generated.
    prepared.commit({ callIndex, outputIds, finishReason: stoppedOnToken ? 'stop' : 'length', reply });
    if (!isSideCall(role)) session.lastMain = { messages: parsed.conversation.messages, reply };
    const final = { message: reply, finishReason, promptTokens: prepared.promptIds.length, outputTokens: outputIds.length };
    if (responder) { responder.end(final); res.end(); }
    else this.sendJson(res, 200, adapter.json(final, meta));
  }

  private models(req: IncomingMessage): unknown {
    const id = this.o.modelName;
    if (req.headers['anthropic-version']) {
      return { data: [{ type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: id, last_id: id };
    }
    return { object: 'list', data: [{ id, object: 'model', created: 0, owned_by: 'clawgym' }] };
  }

  private sendJson(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private sendError(res: ServerResponse, adapter: WireAdapter, err: unknown): void {
    const e = err instanceof WireError ? err : new WireError(500, 'engine', messageOf(err));
    if (res.headersSent) { if (!res.writableEnded) res.end(); return; }
    // A client too slow to send its request gets the answer and loses the connection.
    if (e.status === 408) res.shouldKeepAlive = false;
    const req = res.req as IncomingMessage | undefined;
    if (e.status === 413 && req && !req.complete && !req.destroyed) {
      // The whole answer goes out now, but the response ends only once the refused body is
      // drained (see discardRest): ended earlier, Node closes the connection under a client still
      // sending, which then sees EPIPE instead of the 413 it has already been sent.
      const text = JSON.stringify(adapter.errorBody(e.kind, e.message));
      res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.write(text);
      const end = () => { if (!res.writableEnded) res.end(); };
      req.once('end', end);
      req.once('close', end);
      return;
    }
    this.sendJson(res, e.status || STATUS[e.kind], adapter.errorBody(e.kind, e.message));
  }
}
