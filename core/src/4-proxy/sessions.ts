import { ClawGymError, ErrorCodes } from '../errors';
import type { FingerprintSource } from '../3-harness/fingerprint/fingerprint';
import { LineageTracker } from './lineage';
import { randomBytes } from 'node:crypto';
import type { ChatTemplate } from '../contracts/engine';
import type { CallRequestInfo } from '../contracts/harness';
import type { CanonicalConversation, CanonicalMessage } from '../contracts/messages';
import type { CallRole } from '../contracts/records';
import { TitoLedger } from './ledger';
import { RequestJson, SharedMembers } from './request-json';
import { ParseMemo } from './wire/types';

/** A rollout's session with the proxy: its own base URL path, secret key and TITO ledger. */
export interface SessionState {
  readonly rolloutId: string;
  readonly key: string;
  ledger: TitoLedger;
  /** Reads the session's request bodies, reusing what its previous body held. */
  json: RequestJson;
  /** The wire adapter's conversions of the previous request's history (see ParseMemo). */
  parsed: ParseMemo;
  /** The previous request's messages, their tool-call arguments checked (see checkArgumentsDepth). */
  checked: readonly CanonicalMessage[];
  nextCall: number;
  /** Calls answered as a success (each after its record was written). */
  answered: number;
  /**
   * When the harness first asked for a completion (key accepted, generation route), whatever
   * became of the request: the runner's start-up limit asks whether the harness got this far.
   */
  firstCallAt?: number;
  closed: boolean;
  /** Engine failures in a row; past the limit the session answers non-retryable errors. */
  consecutiveFailures: number;
  /** Set on the first engine or proxy failure: the runner treats the rollout as an infra failure. */
  infraFailure?: string;
  /**
   * The first request of this session (key accepted) that the proxy refused with a 4xx. A
   * harness that then fails failed because of us, not because of the policy: the runner
   * treats it as an infra failure too; one that recovers is scored as usual.
   */
  refused?: string;
  /** Requests being answered, so closing can wait for their records. */
  inFlight: Set<Promise<void>>;
  /** The harness's call classifier, when it has one. */
  classify?: (conversation: CanonicalConversation, requestedModel: string, request: CallRequestInfo) => CallRole;
  /** Notes already logged for this session (each is logged once). */
  logged: Set<string>;
  /** Which line of conversation each call continues (recorded as `lineage`). */
  lineages: LineageTracker;
  /** The system prompt and tools of the session's first main call: what the harness fingerprint is taken from. */
  firstMain?: FingerprintSource;
  /**
   * The last answered main-agent call: its request's messages and the reply returned. Its
   * history holds every earlier turn, so it is the agent's whole conversation (verifiers read
   * the final message and the transcript from it).
   */
  lastMain?: { messages: readonly CanonicalMessage[]; reply: CanonicalMessage };
}

/** What a caller gets back when opening a session. */
export interface SessionInfo {
  rolloutId: string;
  apiKey: string;
  /** `http://host:port/s/<rolloutId>`; append `/v1` for OpenAI-style clients. */
  baseUrl: string;
}

/** All sessions of a proxy, keyed by rollout id. */
export class Sessions {
  private readonly byId = new Map<string, SessionState>();
  /** Long request members (tool lists, system prompts) as the last session sent them. */
  private readonly shared = new SharedMembers();

  constructor(private readonly template: ChatTemplate) {}

  open(rolloutId: string, classify?: SessionState['classify']): SessionState {
    if (!/^[\w.-]{1,128}$/.test(rolloutId)) throw new ClawGymError(ErrorCodes.ROLLOUT_ID_INVALID, `invalid rollout id "${rolloutId}": use letters, digits, ".", "-", "_"`);
    if (this.byId.has(rolloutId)) throw new ClawGymError(ErrorCodes.SESSION_EXISTS, `a session for rollout "${rolloutId}" already exists`, { hint: 'each rollout (and each retry of one) needs its own id' });
    const state: SessionState = {
      rolloutId, key: `cg-${randomBytes(24).toString('base64url')}`, ledger: new TitoLedger(this.template), json: new RequestJson(this.shared), parsed: new ParseMemo(), checked: [],
      nextCall: 0, answered: 0, closed: false, consecutiveFailures: 0, inFlight: new Set(), classify, logged: new Set(), lineages: new LineageTracker(),
    };
    this.byId.set(rolloutId, state);
    return state;
  }

  get(rolloutId: string): SessionState | undefined {
    return this.byId.get(rolloutId);
  }

  /** Close a session after its in-flight calls are recorded; later requests get 410. */
  async close(rolloutId: string): Promise<SessionState | undefined> {
    const s = this.byId.get(rolloutId);
    if (!s || s.closed) return s;
    s.closed = true;
    await Promise.allSettled([...s.inFlight]);
    s.ledger = new TitoLedger(this.template); // drop the history it held
    s.json = new RequestJson(this.shared);
    // The last request's conversation, held for the next request's reuse: none is coming.
    s.parsed = new ParseMemo();
    s.checked = [];
    return s;
  }

  all(): SessionState[] {
    return [...this.byId.values()];
  }
}

/**
 * Constant-time comparison of a presented key with the session's: every code unit is compared,
 * with no early exit (only the length, which is no secret, decides at once). In JavaScript
 * rather than with `timingSafeEqual`: two buffers made and a call into the crypto binding cost
 * ~34 µs of each proxied call (after the 20 ms idle between calls), this loop ~3.
 */
export function keyMatches(presented: string | undefined, expected: string): boolean {
  if (!presented || presented.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= presented.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}
