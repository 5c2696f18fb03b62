import type { FinishReason, OutputEvent } from '../../contracts/engine';
import type { CanonicalConversation, CanonicalMessage } from '../../contracts/messages';
import type { WireFormat } from '../../contracts/records';
import { isSettled } from '../../util/settled';

/** A request in canonical form, with what the engine needs to sample. */
export interface ParsedRequest {
  conversation: CanonicalConversation;
  model: string;
  stream: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  /** OpenAI chat: send a usage chunk at the end of the stream. */
  includeUsage?: boolean;
  /** Anthropic `thinking.display: "omitted"`: thinking is generated and recorded but returned empty. */
  omitThinking?: boolean;
  /** The JSON schema the reply must follow (structured output), when the request gives one. */
  responseSchema?: Record<string, unknown>;
  /**
   * Request features handled on purpose, in words (recorded with the call and logged once per
   * session): what was left out of the prompt and why, what was accepted but has no effect here.
   */
  notes?: string[];
}

/** A request the wire format cannot accept; answered with `status` in the format's error shape. */
export class WireError extends Error {
  constructor(
    readonly status: number,
    readonly kind: ErrorKind,
    message: string,
    /**
     * The policy's own doing, not ours or the harness's: a conversation that outgrew the model's
     * context. A harness that fails of it is scored (reward 0), as a rollout that ran out of
     * room would be, not dropped as an infra failure.
     */
    readonly byPolicy = false,
  ) {
    super(message);
  }
}

/** Error kinds, mapped by each format to its own error types. */
export type ErrorKind = 'invalid_request' | 'authentication' | 'not_found' | 'gone' | 'too_large' | 'engine' | 'overloaded';

/** The finished reply, for the last events of a stream or the JSON body. */
export interface FinalReply {
  message: CanonicalMessage;
  finishReason: FinishReason;
  promptTokens: number;
  outputTokens: number;
}

/** Writes one response as server-sent events. */
export interface SseSink {
  /** `event:` line (Anthropic, Responses) or none (OpenAI chat), then `data:`. */
  send(event: string | undefined, data: unknown): void;
  /** Raw `data: [DONE]`-style line. */
  sendRaw(data: string): void;
}

/** Turns output events into one wire format's stream. */
export interface StreamResponder {
  begin(): void;
  event(e: OutputEvent): void;
  /** Last events, after the record is stored. */
  end(final: FinalReply): void;
  /** An engine failure mid-stream, reported in the format's own way. */
  fail(message: string): void;
}

/** Response metadata shared by stream and JSON. */
export interface ResponseMeta {
  id: string;
  model: string;
  created: number;
  promptTokens: number;
  /** OpenAI chat: the request asked for a usage chunk at the end of the stream. */
  includeUsage?: boolean;
  /** Return thinking blocks with empty text (Anthropic `thinking.display: "omitted"`). */
  omitThinking?: boolean;
}

/** One wire format: parse its requests, write its responses and errors. */
export interface WireAdapter {
  readonly format: WireFormat;
  /** The request member holding the conversation (`messages`, `input`): read element by element, reusing the elements an earlier body had. */
  readonly historyKey: string;
  /** `memo`: the session's, so that what its previous request held is not converted again (see {@link ParseMemo}). */
  parse(body: unknown, memo?: ParseMemo): ParsedRequest;
  stream(sink: SseSink, meta: ResponseMeta): StreamResponder;
  json(final: FinalReply, meta: ResponseMeta): unknown;
  errorBody(kind: ErrorKind, message: string): unknown;
}

/** Narrowing helpers for request bodies. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export function need<T>(ok: boolean, value: T, message: string): T {
  if (!ok) throw new WireError(400, 'invalid_request', message);
  return value;
}
export const optNumber = (v: unknown, name: string): number | undefined =>
  v === undefined || v === null ? undefined : need(typeof v === 'number' && Number.isFinite(v), v as number, `${name} must be a number`);

/**
 * What an adapter makes of a settled request value (a message or tool list an earlier body
 * held, see request-json.ts), remembered by the value's identity: each is converted once per
 * session instead of once per call. Values that are not settled are converted every time.
 */
export class Derived<V> {
  private readonly known = new WeakMap<object, V>();

  of(value: unknown, make: () => V): V {
    if (typeof value !== 'object' || value === null || !isSettled(value)) return make();
    let v = this.known.get(value);
    if (v === undefined) this.known.set(value, (v = make()));
    return v;
  }
}

/**
 * A session's conversions of its previous request's history, reused by position: the session's
 * body reader gives back the very value its previous body held at a place (request-json.ts), and
 * such an element gets what it got then, found by comparing two references instead of reading
 * the element (at every call, a whole conversation of values last touched a call ago, and out
 * of the cache). {@link Derived} still finds values the session held elsewhere.
 */
export class ParseMemo {
  private readonly lists = new Map<string, { raw: readonly unknown[]; out: readonly unknown[] }>();

  /** `raw` converted element by element, reusing the last conversion of the list named `name`. */
  map<V>(name: string, raw: readonly unknown[], convert: (value: unknown, index: number) => V): V[] {
    const last = this.lists.get(name);
    const out = new Array<V>(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = last !== undefined && raw[i] === last.raw[i] ? last.out[i] as V : convert(raw[i], i);
    // A copy: what it returns is the caller's array (a conversation's `messages`), the memo's stays as it was made.
    this.lists.set(name, { raw, out: out.slice() });
    return out;
  }
}

/** `raw` converted element by element, through the session's memo when there is one. */
export const historyOf = <V>(memo: ParseMemo | undefined, name: string, raw: readonly unknown[], convert: (value: unknown, index: number) => V): V[] =>
  (memo ? memo.map(name, raw, convert) : raw.map(convert));
