import type { ServerResponse } from 'node:http';
import type { Engine, FinishReason, OutputEvent } from '../contracts/engine';
import type { CanonicalMessage } from '../contracts/messages';
import { isSideCall, type ModelCallRecord, type RecordStore } from '../contracts/records';
import { eventsToMessage } from './engine/output';
import { messageOf } from '../errors';
import { fingerprintSource } from '../3-harness/fingerprint/fingerprint';
import { randomHex } from '../util/random-hex';
import { drainTokens } from './generate';
import type { PreparedPrompt } from './ledger';
import { checkSchema, classifyCall, withSchemaInstruction } from './request-features';
import { sendError, sendJson } from './responses';
import { ID_PREFIX } from './routes';
import type { SessionState } from './sessions';
import { WireError, type ParsedRequest, type SseSink, type WireAdapter } from './wire/types';

/** What answering a call needs of the proxy's settings (made once per proxy). */
export interface CallSettings {
  engine: Engine;
  store: RecordStore;
  runId: string;
  maxTokens: number;
  temperature: number;
  topP: number;
  firstTokenTimeoutMs: number;
  nextTokenTimeoutMs: number;
  /** The engine's template's stop ids. */
  stopIds: ReadonlySet<number>;
  onRecord?: (record: ModelCallRecord) => Promise<void>;
  onNote?: (rolloutId: string, note: string) => void;
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

/** A call once its prompt is ready: what generation and recording share. */
interface Started {
  receivedAt: number;
  prepared: PreparedPrompt;
  callIndex: number;
  maxTokens: number;
  meta: Parameters<WireAdapter['stream']>[1];
  /** The harness's classification of the call, made before generation (the engine is told it). */
  role: ModelCallRecord['role'];
  abort: LazyAbort;
  /** The streamed response's writer (undefined: a JSON response, written at the end). */
  responder?: ReturnType<WireAdapter['stream']>;
}

/** What generation gave. */
interface Generated {
  events: OutputEvent[];
  outputIds: number[];
  logprobs: number[];
  firstTokenAt?: number;
  /** Whether it ended on a stop id (kept last in `outputIds`). */
  stoppedOnToken: boolean;
  failure?: string;
}

/** Answer one generation request of a session: prompt, engine, record, response. */
export async function answerCall(s: CallSettings, session: SessionState, adapter: WireAdapter, parsed: ParsedRequest, res: ServerResponse): Promise<void> {
  const call = startCall(s, session, adapter, parsed, res);
  const generated = await generate(s, session, parsed, call);
  await finishCall(s, session, adapter, parsed, res, call, generated);
}

/**
 * The prompt from the session's ledger, refused when the model cannot read it whole; the call's
 * index, output cap and response metadata; a streamed response's headers sent.
 */
function startCall(s: CallSettings, session: SessionState, adapter: WireAdapter, parsed: ParsedRequest, res: ServerResponse): Started {
  const engine = s.engine;
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
  const role = classifyCall(session, parsed);
  const callIndex = session.nextCall++;
  // The output is capped at the room the context leaves, and reported as cut ('length') when it fills it.
  const room = context === undefined ? Infinity : context - prepared.promptIds.length;
  const maxTokens = Math.min(parsed.maxTokens ?? s.maxTokens, s.maxTokens, room);
  const meta = {
    id: `${ID_PREFIX[adapter.format]}_${randomHex(12)}`,
    model: parsed.model, created: Math.floor(receivedAt / 1000), promptTokens: prepared.promptIds.length, includeUsage: parsed.includeUsage,
    ...(parsed.omitThinking ? { omitThinking: true } : {}),
  };
  const abort = new LazyAbort();
  res.on('close', () => { if (!res.writableFinished) abort.abort(); });

  let responder: Started['responder'];
  if (parsed.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    const sink: SseSink = {
      send: (event, data) => { res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`); },
      sendRaw: (data) => { res.write(`data: ${data}\n\n`); },
    };
    responder = adapter.stream(sink, meta);
    responder.begin();
  }
  return { receivedAt, prepared, callIndex, maxTokens, meta, role, abort, responder };
}

/** The engine's tokens for the call, parsed into events (streamed out as they come when streaming). An engine failure is returned, not thrown. */
async function generate(s: CallSettings, session: SessionState, parsed: ParsedRequest, call: Started): Promise<Generated> {
  const { engine, stopIds } = s;
  const { abort, responder, maxTokens } = call;
  const parser = engine.chatTemplate.streamParser(parsed.conversation.tools);
  const out: Generated = { events: [], outputIds: [], logprobs: [], stoppedOnToken: false };
  const { events, outputIds, logprobs } = out;
  const emit = (evs: OutputEvent[]) => { for (const e of evs) { events.push(e); responder?.event(e); } };
  /** The ids to parse: all but the stop id. */
  const generated = () => (out.stoppedOnToken ? outputIds.length - 1 : outputIds.length);
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
      promptIds: call.prepared.promptIds, sessionId: session.rolloutId, get signal() { return abort.signal; }, ...(call.role ? { role: call.role } : {}),
      sampling: { maxTokens, temperature: parsed.temperature ?? s.temperature, topP: parsed.topP ?? s.topP },
    }, s.firstTokenTimeoutMs, s.nextTokenTimeoutMs, () => abort.abort(), (t) => {
      out.firstTokenAt ??= Date.now();
      outputIds.push(t.tokenId);
      logprobs.push(t.logprob);
      if (stopIds.has(t.tokenId)) { out.stoppedOnToken = true; return false; }
      if (responder) parseTo(outputIds.length);
      return outputIds.length < maxTokens && !abort.aborted;
    });
    parseTo(generated());
    emit(parser.end());
  } catch (err) {
    out.failure = messageOf(err);
    // The engine failed: what it generated before is parsed, as it was while streaming.
    if (!parserFailed) { try { parseTo(generated()); } catch { /* the failure stands */ } }
  }
  return out;
}

/**
 * Record the call (before its response's final event), then answer: the failure, a client gone
 * (nothing to answer), or the reply — which only then enters the ledger.
 */
async function finishCall(s: CallSettings, session: SessionState, adapter: WireAdapter, parsed: ParsedRequest, res: ServerResponse, call: Started, g: Generated): Promise<void> {
  const { prepared, callIndex, responder } = call;
  const clientGone = call.abort.aborted && g.failure === undefined;
  const reply = eventsToMessage(g.events);
  const finishReason: FinishReason = g.failure ? 'error' : clientGone ? 'aborted'
    : reply.parts.some((p) => p.type === 'tool_call') ? 'tool_calls' : g.stoppedOnToken ? 'stop' : g.outputIds.length >= call.maxTokens ? 'length' : 'stop';
  const { failure, role } = await recordCall(s, session, adapter, parsed, call, g, reply, finishReason, clientGone);

  if (failure) {
    prepared.failed(callIndex);
    session.consecutiveFailures++;
    session.infraFailure ??= failure;
    if (responder) { responder.fail(failure); res.end(); }
    else sendError(res, adapter, new WireError(500, 'engine', failure));
    return;
  }
  session.consecutiveFailures = 0;
  if (clientGone) { prepared.failed(callIndex); res.end(); return; }
  // Only answered calls enter the ledger; the ledger's ending tells the template whether <|im_end|> was generated.
  prepared.commit({ callIndex, outputIds: g.outputIds, finishReason: g.stoppedOnToken ? 'stop' : 'length', reply });
  if (!isSideCall(role)) session.lastMain = { messages: parsed.conversation.messages, reply };
  const final = { message: reply, finishReason, promptTokens: prepared.promptIds.length, outputTokens: g.outputIds.length };
  session.answered++;
  if (responder) { responder.end(final); res.end(); }
  else sendJson(res, 200, adapter.json(final, call.meta));
}

/** The call's record, stored and handed to `onRecord`; returns the call's failure (the engine's, or the recording's) and its role. */
async function recordCall(
  s: CallSettings, session: SessionState, adapter: WireAdapter, parsed: ParsedRequest, call: Started, g: Generated,
  reply: CanonicalMessage, finishReason: FinishReason, clientGone: boolean,
): Promise<{ failure?: string; role: ModelCallRecord['role'] }> {
  const { prepared, callIndex, role } = call;
  const engine = s.engine;
  const notes = [...(parsed.notes ?? [])];
  if (parsed.responseSchema && !g.failure && !clientGone) notes.push(checkSchema(reply, parsed.responseSchema));
  if (!session.firstMain && !isSideCall(role)) session.firstMain = fingerprintSource(parsed.conversation);
  const record: ModelCallRecord = {
    runId: s.runId, rolloutId: session.rolloutId, callIndex, wireFormat: adapter.format, requestedModel: parsed.model,
    promptIds: prepared.promptIds, outputIds: g.outputIds, outputLogprobs: g.logprobs, finishReason, origin: prepared.origin, drift: prepared.drift,
    sampling: { temperature: parsed.temperature ?? s.temperature, topP: parsed.topP ?? s.topP, logprobs: engine.logprobs ?? 'unknown' },
    policyVersion: engine.policyVersion(session.rolloutId), timings: { receivedAt: call.receivedAt, firstTokenAt: g.firstTokenAt, finishedAt: Date.now() },
    ...(role ? { role } : {}),
    lineage: session.lineages.assign(callIndex, prepared.origin, role),
    ...(notes.length ? { notes } : {}),
  };
  for (const n of notes) {
    if (session.logged.has(n)) continue;
    session.logged.add(n);
    s.onNote?.(session.rolloutId, n);
  }
  try {
    await s.store.append(record);
    await s.onRecord?.(record);
  } catch (err) {
    return { failure: g.failure ?? `could not record the call: ${messageOf(err)}`, role };
  }
  return { failure: g.failure, role };
}
