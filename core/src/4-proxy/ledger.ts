import type { ChatTemplate, ContinuationHistory, Drift, FinishReason, TokenIds } from '../contracts/engine';
import type { CanonicalConversation, CanonicalMessage, ToolSpec } from '../contracts/messages';
import type { PromptOrigin } from '../contracts/records';
import { sameMessage, splitTrailingContext, toolsKey } from './canonical';
import { sameJson } from '../util/same-values';
import { settle } from '../util/settled';
import { checkConversationDepth } from './json-depth';
import { IdBuffer } from './id-buffer';

/** What the ledger remembers of one answered call. */
interface Entry {
  callIndex: number;
  tools: string;
  /** The prompt's messages (OpenClaw context set aside). */
  messages: readonly CanonicalMessage[];
  /** The messages as the request's adapter gave them, before {@link TitoLedger.share} replaced equal ones by kept ones. */
  incoming: readonly CanonicalMessage[];
  /** The context message, when one was set aside. */
  context?: CanonicalMessage;
  /** The assistant reply we returned. */
  reply: CanonicalMessage;
  /** The buffer holding this call's prompt (and, while it is the tip, what follows). */
  buffer: IdBuffer;
  promptIds: TokenIds;
  outputIds: readonly number[];
  finishReason: FinishReason;
}

/** A prompt ready for the engine, and how it was made. */
export interface PreparedPrompt {
  promptIds: TokenIds;
  origin: PromptOrigin;
  /** How the prompt relates to the template's render of the whole conversation. */
  drift: Drift;
  /** Remember the answer, so later calls can extend it. Call only for calls that completed. */
  commit(answer: { callIndex: number; outputIds: readonly number[]; finishReason: FinishReason; reply: CanonicalMessage }): void;
  /**
   * Remember a call that failed (engine error, cut stream): the harness's re-send of the same
   * messages is then a retry of it, not a fork, even when nothing was answered before.
   */
  failed(callIndex: number): void;
}

/** A call that was prepared but not answered, kept so its re-send is seen as a retry. */
type Attempt = Pick<Entry, 'callIndex' | 'tools' | 'messages' | 'context' | 'promptIds'>;

/**
 * The last tool list seen by any session and its key: a harness sends the same list at every
 * call, and the sessions of a run run the same harness. Shared, the list compared with is the
 * one of the latest call of any session, still in the cache, not the one this session sent
 * seconds ago.
 */
let lastTools: { list: readonly ToolSpec[]; key: string } | undefined;

const sameContext = (a?: CanonicalMessage, b?: CanonicalMessage) => (a && b ? sameMessage(a, b) : a === b);

/**
 * Token-in-token-out ledger of one session. When a request's messages extend an earlier
 * call's messages plus the reply we returned, the earlier prompt ids and the **raw generated
 * ids** are reused verbatim and only the new suffix is rendered — text we decoded is never
 * re-encoded, and tokenizing costs the new tokens, not the history. A request with exactly an
 * earlier call's messages (a retry) gets that call's prompt ids. Otherwise the conversation is
 * rendered in full and the call is a fork, with the reason.
 *
 * OpenClaw's trailing internal-context message is set aside for matching. Design choice: when
 * it is unchanged it is *not* re-appended (it already sits in the reused prefix, where the model
 * first saw it); when its content changed, the new one is appended after the new messages.
 */
export class TitoLedger {
  private readonly entries: Entry[] = [];
  private readonly attempts: Attempt[] = [];
  /** The template's per-session state for continuations (see ChatTemplate.continueFrom). */
  private readonly memo: Record<string, unknown> = {};

  constructor(private readonly template: ChatTemplate) {}

  prepare(conversation: CanonicalConversation): PreparedPrompt {
    checkConversationDepth(conversation);
    const { messages, context } = splitTrailingContext(conversation.messages);
    const incoming = this.share(messages);
    if (context) settle(context);
    const tools = this.toolsKeyOf(conversation.tools);
    const parent = this.findParent(messages, tools);
    const retried = parent ? undefined : this.latestSame(this.entries, messages, tools, context) ?? this.latestSame(this.attempts, messages, tools, context);
    let buffer: IdBuffer;
    let origin: PromptOrigin;
    let drift: Drift;
    if (retried) {
      buffer = 'buffer' in retried ? (retried as Entry).buffer : IdBuffer.of(retried.promptIds);
      origin = { kind: 'retry', of: retried.callIndex };
      drift = { class: 'clean', reason: `the same messages as call ${retried.callIndex} (a retry): its prompt ids` };
    } else if (parent) {
      const suffix = messages.slice(parent.messages.length + 1);
      if (context && !sameContext(context, parent.context)) suffix.push(context);
      let continuation: TokenIds;
      if (this.template.continueFrom) {
        const c = this.template.continueFrom({ messages: parent.messages, reply: parent.reply, tools: conversation.tools, outputIds: parent.outputIds, finishReason: parent.finishReason }, suffix, this.memo);
        continuation = c.ids;
        drift = { class: c.drift.class, reason: `extends call ${parent.callIndex}: ${c.drift.reason}` };
      } else {
        continuation = this.template.renderContinuation(suffix, parent.finishReason);
        drift = { class: 'clean', reason: `extends call ${parent.callIndex} (the template renders each message on its own)` };
      }
      // Extend the parent's buffer in place when the parent is its tip; otherwise branch off.
      buffer = parent.buffer.length === parent.promptIds.length ? parent.buffer : IdBuffer.of(parent.promptIds);
      buffer.append(parent.outputIds);
      buffer.append(continuation);
      origin = { kind: 'reuse', parentCall: parent.callIndex, reusedTokens: parent.promptIds.length + parent.outputIds.length };
    } else {
      buffer = IdBuffer.forRender(this.template.render(conversation));
      origin = { kind: 'fork', reason: this.whyFork(messages, tools) };
      drift = this.entries.length === 0 ? { class: 'clean', reason: 'first call of the session: rendered in full' } : { class: 'fork', reason: origin.reason };
    }
    const promptIds = retried ? retried.promptIds : buffer.view();
    return {
      promptIds,
      origin,
      drift,
      commit: (answer) => {
        settle(answer.reply);
        this.entries.push({
          callIndex: answer.callIndex, tools, messages, incoming, context, reply: answer.reply,
          buffer, promptIds, outputIds: answer.outputIds, finishReason: answer.finishReason,
        });
        this.prime({ messages, reply: answer.reply, tools: conversation.tools, outputIds: answer.outputIds, finishReason: answer.finishReason });
      },
      failed: (callIndex) => {
        this.attempts.push({ callIndex, tools, messages, context, promptIds });
      },
    };
  }

  /**
   * Let the template get ready for a continuation of the call just answered (see
   * ChatTemplate.primeContinuation) once the response is on its way: after the next round of I/O
   * (two turns of the event loop), so that a harness in this process reads its answer first.
   * A later call that arrives before it simply does without.
   */
  private prime(history: ContinuationHistory): void {
    const template = this.template;
    if (!template.primeContinuation) return;
    setImmediate(() => setImmediate(() => {
      // Only for the latest call: the next request most likely extends it.
      if (this.entries[this.entries.length - 1]?.messages !== history.messages) return;
      try { template.primeContinuation!(history, this.memo); } catch { /* the next call renders its window itself */ }
    }));
  }

  /**
   * Each request brings the whole conversation again, parsed into new objects. A message equal
   * value for value (keys in any order) to the latest call's message at its place (or to the reply it returned) is
   * replaced by that call's object, and the rest are settled (frozen; util/settled.ts): a
   * session keeps each message once instead of once per call (a 50-call rollout held 50 copies
   * of its system prompt), comparisons with earlier calls find the same object, and the
   * template converts each message once. Equal values are the same message for every later use.
   * A message the adapter gave at the latest call, at the same place, gets what it got then (a
   * reply's echo is the adapter's object, not the reply: found again by position, not looked up).
   * Returns the messages as they came.
   */
  private share(messages: CanonicalMessage[]): readonly CanonicalMessage[] {
    const incoming = messages.slice();
    const last = this.entries[this.entries.length - 1];
    const known = last?.messages ?? [];
    if (last) {
      const before = last.incoming;
      const n = Math.min(messages.length, known.length);
      for (let i = 0; i < n; i++) {
        const m = messages[i]!;
        if (m !== known[i]) messages[i] = m === before[i] ? known[i]! : this.kept(m, known[i]!);
      }
      if (messages.length > n && n === known.length) messages[n] = this.kept(messages[n]!, last.reply);
    }
    // What the ledger kept is settled already.
    for (let i = 0; i < messages.length; i++) if (messages[i] !== known[i]) settle(messages[i]);
    return incoming;
  }

  /**
   * Messages found equal to one the ledger keeps, by identity. The wire adapters give back the
   * same settled message for a message an earlier body held (request-json.ts): the one that
   * echoes a reply is then found equal to that reply once, not compared again at every call.
   */
  private readonly equalTo = new WeakMap<CanonicalMessage, CanonicalMessage>();

  /** `known` when `m` is equal to it (value for value), else `m`. */
  private kept(m: CanonicalMessage, known: CanonicalMessage): CanonicalMessage {
    if (this.equalTo.get(m) === known) return known;
    if (!sameJson(m, known)) return m;
    this.equalTo.set(settle(m), known);
    return known;
  }

  /**
   * The key of a tool list. A list equal value for value to the last one (the usual case: the
   * same tools at every call) has its key, found by a comparison several times cheaper than
   * writing the list out as JSON; equal values (keys in any order) have the same sorted JSON, so the same key.
   */
  private toolsKeyOf(list: readonly ToolSpec[]): string {
    const last = lastTools;
    if (last && sameJson(list, last.list)) return last.key;
    const key = toolsKey(list);
    lastTools = { list, key };
    return key;
  }

  /** The latest call whose messages + reply are a prefix of `messages`. */
  private findParent(messages: readonly CanonicalMessage[], tools: string): Entry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      const n = e.messages.length;
      if (e.tools !== tools || messages.length <= n || !sameMessage(messages[n]!, e.reply)) continue;
      if (this.samePrefix(messages, e.messages, n)) return e;
    }
    return undefined;
  }

  /**
   * The latest of `list` with exactly these messages, tools and context: among the recorded calls,
   * a retry with an identical body; among the failed ones, their re-send after the error.
   */
  private latestSame<T extends Attempt>(list: readonly T[], messages: readonly CanonicalMessage[], tools: string, context: CanonicalMessage | undefined): T | undefined {
    for (let i = list.length - 1; i >= 0; i--) {
      const a = list[i]!;
      if (a.tools === tools && a.messages.length === messages.length && sameContext(a.context, context) && this.samePrefix(messages, a.messages, messages.length)) return a;
    }
    return undefined;
  }

  private samePrefix(a: readonly CanonicalMessage[], b: readonly CanonicalMessage[], n: number): boolean {
    // Newest messages first: a rewritten history usually differs near the end.
    for (let j = n - 1; j >= 0; j--) if (!sameMessage(a[j]!, b[j]!)) return false;
    return true;
  }

  /** Explain a fork by the earlier call that came closest. */
  private whyFork(messages: readonly CanonicalMessage[], tools: string): string {
    if (this.entries.length === 0) return 'first call of the session';
    let best: { e: Entry; common: number } | undefined;
    // Compare with the calls that offered the same tools when there are any: a side call without
    // tools (a compaction, a title) is not what a main call's history was rewritten from.
    const same = this.entries.filter((e) => e.tools === tools);
    for (const e of same.length ? same : this.entries) {
      const full = [...e.messages, e.reply];
      let common = 0;
      while (common < full.length && common < messages.length && sameMessage(full[common]!, messages[common]!)) common++;
      if (!best || common >= best.common) best = { e, common };
    }
    const { e, common } = best!;
    if (e.tools !== tools) return `tool list differs from call ${e.callIndex}`;
    if (common === e.messages.length) {
      return messages.length > common ? `call ${e.callIndex}'s reply was not echoed as we returned it (message ${common} differs)` : `request ends before call ${e.callIndex}'s reply`;
    }
    if (common >= messages.length) return `request is a prefix of call ${e.callIndex}'s prompt (a retry or regeneration)`;
    return `message ${common} differs from call ${e.callIndex}'s (history rewritten)`;
  }
}
