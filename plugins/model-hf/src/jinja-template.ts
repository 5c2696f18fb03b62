import { IdChunks, sameValues, settle, ClawGymError, ErrorCodes, eventsToMessage, type ChatTemplate, type ContinuationHistory, type Drift, type FinishReason, type OutputStreamParser, type TokenIds, type CanonicalMessage, type MessagePart, type ToolSpec } from '@clawgym/core';
import { Neutralizer, Opaque } from './neutralize';
import { idStreamParser } from './parsers/types';
import { toTemplateMessages, type TemplateMessage } from './template-messages';
import { JinjaRendering, type JinjaTemplateOptions, type RawRender, type Rendered } from './jinja-render';

export type { JinjaTemplateOptions, RawRender, Rendered };

/** What a session's ledger keeps for {@link JinjaChatTemplate.continueFrom} between calls. */
export interface ContinuationMemo {
  /** History size (messages) at the last check against the full render. */
  checkedAt?: number;
  /** The window once gave another answer than the full render: render in full. */
  whole?: boolean;
  /** The last call's window with its reply and new messages, and their render (see continueFrom). */
  last?: { window: TemplateMessage[]; raw: string; neutral: Neutralizer; tools: string; history: TemplateMessage[] };
  /** The window of the last answered call and its render, made off the request path (see primeContinuation). */
  primed?: { messages: readonly CanonicalMessage[]; reply: CanonicalMessage; tools: string; all: TemplateMessage[]; replyForm: TemplateMessage[]; window: TemplateMessage[]; before: RawRender; foreseen?: Speculation };
  /** The session's tools reduced to their names (the same object while the names stay). */
  standIn?: { list: ToolSpec[]; names: string };
}

/**
 * The continuation of an answered call rendered before the next request, for new messages of a
 * likely shape (a tool result per tool call) whose texts are {@link Opaque}: what is left to do
 * when they come is to check their shape, fill in their texts and encode.
 */
interface Speculation extends Cut {
  /** The new messages as rendered: their strings opaque. */
  next: Record<string, unknown>[];
  /** The render's placeholders (the opaque texts' are filled in per call). */
  neutral: Neutralizer;
}

/** A continuation cut from a render of the context plus the reply and the new messages (see JinjaChatTemplate.cut). */
interface Cut {
  /** The render's text after the reply's stop marker, placeholders in: what is encoded. */
  tail: string;
  /** Where the tail starts in the render. */
  start: number;
  /** The stop id to put before the tail (the reply was cut before generating it). */
  lead?: number;
  drift: Drift;
}

/** A context message with long text cut to its two ends (templates test prefixes and suffixes). */
function abbreviate(m: TemplateMessage): TemplateMessage {
  return m.content.length > 96 ? { ...m, content: `${m.content.slice(0, 48)}${m.content.slice(-48)}` } : m;
}

const thinkRe = /<think>[\s\S]*?<\/think>/;


/**
 * A model's own Jinja chat template over its own tokenizer. Renders exactly what Python's
 * `apply_chat_template` writes (see jinja-env.ts), encodes markup to control ids and message
 * text never to them, continues a conversation by rendering only a small context around the new
 * messages, and says how a reused prompt drifts from the template's render of the whole.
 */
export class JinjaChatTemplate extends JinjaRendering implements ChatTemplate {
  /**
   * The ids after a generated reply, rendered from a small window: the leading system message
   * (tools live there), the first tool result and the last real user message (templates keep
   * state across messages: Qwen3 renders reasoning only after the last user query, DeepSeek-V3
   * opens tool outputs once) and the message before the reply, with tools reduced to their names
   * (the window's system part is cut off anyway). `memo` is the session's: at calls whose
   * history has doubled since the last check, the window's answer is checked against the full
   * render; if they ever differ, that session renders in full from then on. So a call costs its
   * new messages, and the check costs the history only log2(calls) times. The window's own
   * render comes from the memo when it can: made after the parent call was answered
   * ({@link primeContinuation}), or the last call's render when this call extends it.
   */
  continueFrom(history: ContinuationHistory, next: CanonicalMessage[], memo: ContinuationMemo = {}): { ids: TokenIds; drift: Drift } {
    const primed = memo.primed;
    memo.primed = undefined;
    // The history's template form comes with the window made for it, when there is one.
    const same = primed !== undefined && primed.messages === history.messages && primed.reply === history.reply;
    const all = same ? primed.all : toTemplateMessages(history.messages);
    const reply = same ? primed.replyForm : toTemplateMessages([history.reply]);
    const following = toTemplateMessages(next);
    const whole = () => this.continueWith(all, reply, following, history, history.tools, true)!;
    if (memo.whole) return whole();
    const { list: standIn, names: toolNames } = this.standInOf(history.tools, memo);
    const gp = this.generationPrompt();
    let windowed: TemplateMessage[];
    let known: RawRender | undefined;
    let fast: { ids: TokenIds; drift: Drift; after?: RawRender } | undefined;
    const prev = memo.last;
    if (same && gp !== null && primed.tools === toolNames) {
      // This call's window and its render, made after the call it extends was answered; and,
      // when its new messages have the shape foreseen, their turn rendered then too.
      windowed = primed.window;
      known = primed.before;
      fast = primed.foreseen && this.fillIn(primed.foreseen, following);
    } else if (prev && gp !== null && prev.tools === toolNames && prev.window.length <= 16 && all.length === prev.history.length
      && prev.raw.endsWith(gp) && sameValues(all, prev.history)) {
      // The last call's window plus what it added is a window of this call too (it keeps the
      // system message, the first tool result, the last user query and ends with the message
      // before the reply), and its render, without the generation prompt, is already known: one
      // render per call instead of two, until the window has grown to 16 messages. Only when
      // this history is exactly that call's history plus that tail (a session can branch):
      // compared value by value, newest first, without writing either out.
      windowed = prev.window;
      known = { raw: prev.raw.slice(0, prev.raw.length - gp.length), neutral: prev.neutral };
    } else windowed = this.windowOf(all);
    // A foreseen turn's render holds the new texts as placeholders (no render of this window with
    // them to extend): the next call, if unprimed, renders its window anew.
    fast ??= this.continueWith(windowed, reply, following, history, standIn, false, known);
    if (fast?.after) {
      const tail = [...reply, ...following];
      memo.last = { window: [...windowed, ...tail], raw: fast.after.raw, neutral: fast.after.neutral, tools: toolNames, history: [...all, ...tail] };
    } else memo.last = undefined;
    const size = all.length + 1;
    if (fast && size < (memo.checkedAt ?? 0) * 2) return fast;
    const full = whole();
    memo.checkedAt = size;
    if (fast && fast.drift.class === full.drift.class && fast.ids.length === full.ids.length && fast.ids.every((id, i) => id === full.ids[i])) return fast;
    memo.whole = true;
    return full;
  }

  /**
   * The window of a history: the leading system message, the first tool result, the last user
   * message and the last message. Context messages only set the template's state (roles, calls,
   * markers at the ends of the text): their text lands in the prefix that is cut off, so long
   * text is abbreviated.
   */
  private windowOf(all: readonly TemplateMessage[]): TemplateMessage[] {
    const picked = new Set<number>();
    if (all[0]?.role === 'system') picked.add(0);
    const firstTool = all.findIndex((m) => m.role === 'tool');
    if (firstTool >= 0) picked.add(firstTool);
    for (let i = all.length - 1; i >= 0; i--) if (all[i]!.role === 'user') { picked.add(i); break; }
    if (all.length) picked.add(all.length - 1);
    return [...picked].sort((a, b) => a - b).map((i) => abbreviate(all[i]!));
  }

  /** Tools reduced to their names, the same settled list while the session's names stay the same. */
  private standInOf(tools: readonly ToolSpec[], memo: ContinuationMemo): { list: ToolSpec[]; names: string } {
    const known = memo.standIn;
    if (known && known.list.length === tools.length && tools.every((t, i) => t.name === known.list[i]!.name)) return known;
    const list = settle(tools.map((t) => ({ name: t.name, description: '', parameters: { type: 'object', properties: {} } })));
    return (memo.standIn = { list, names: JSON.stringify(list.map((t) => t.name)) });
  }

  /**
   * Get ready for a continuation of a call just answered, off the request path: its window and
   * the window's render (what {@link continueFrom} would otherwise render while the next request
   * waits), kept in the session's memo for a continuation of exactly this call. A failure here
   * only means the next call renders its window itself.
   */
  primeContinuation(history: ContinuationHistory, memo: ContinuationMemo): void {
    memo.primed = undefined;
    const gp = this.generationPrompt();
    if (memo.whole || gp === null) return;
    const all = toTemplateMessages(history.messages);
    const window = this.windowOf(all);
    const replyForm = toTemplateMessages([history.reply]);
    const { list, names } = this.standInOf(history.tools, memo);
    try {
      const before = this.renderRaw(window, list, false);
      let foreseen: Speculation | undefined;
      try { foreseen = this.foresee(window, replyForm, list, history, before, gp); } catch { /* the next call renders its turn */ }
      memo.primed = { messages: history.messages, reply: history.reply, tools: names, all, replyForm, window, before, foreseen };
    } catch { /* the next call renders it, and reports what fails */ }
  }

  /**
   * The turn of the next call's new messages, rendered now for the shape a harness sends after
   * tool calls — one tool result per call, in order — with their texts {@link Opaque}: a render
   * that the compiled template finishes with them is the render of every text in their place
   * (jinja-compile.ts), so at the next call only the shape is checked and the texts filled in.
   * Undefined where the reply made no tool calls, the template looks at such a text, or the
   * texts would land before the reply's stop marker; a template that fails a continuation throws,
   * as {@link cut} does for any render (the caller then foresees nothing).
   */
  private foresee(window: TemplateMessage[], replyForm: TemplateMessage[], tools: readonly ToolSpec[], h: ContinuationHistory, before: RawRender, gp: string): Speculation | undefined {
    const calls = h.reply.parts.reduce((n, p) => n + (p.type === 'tool_call' ? 1 : 0), 0);
    if (calls === 0) return undefined;
    const next = Array.from({ length: calls }, () => ({ role: 'tool', content: new Opaque(), tool_call_id: new Opaque() }));
    const after = this.renderWith([...window, ...replyForm, ...next], (plain) => this.toolsOf(tools, plain), true, true);
    // Cut only between renders of one kind (both hidden or both of the original text).
    if (!after || after.neutral.plain !== before.neutral.plain) return undefined;
    const cut = this.cut(before, { raw: before.raw + gp, neutral: before.neutral }, after, h, false);
    if (!cut) return undefined;
    for (const m of next) for (const o of [m.content, m.tool_call_id]) if (after.raw.lastIndexOf(o.placeholder, cut.start - 1) >= 0) return undefined;
    return { ...cut, next, neutral: after.neutral };
  }

  /**
   * The continuation foreseen by {@link foresee}, for these new messages: when they have its
   * messages' shape (the same keys in the same order, a string where it held an opaque text, the
   * same value elsewhere), its tail with their texts filled in, encoded; else undefined.
   */
  private fillIn(spec: Speculation, following: readonly TemplateMessage[]): { ids: TokenIds; drift: Drift } | undefined {
    if (following.length !== spec.next.length) return undefined;
    const neutral = spec.neutral.copy();
    for (let i = 0; i < following.length; i++) {
      const real = following[i] as unknown as Record<string, unknown>;
      const shape = spec.next[i]!;
      const keys = Object.keys(shape);
      const realKeys = Object.keys(real);
      // The same keys in the same order: a template that walks a message's keys meets them so.
      if (realKeys.length !== keys.length) return undefined;
      for (let j = 0; j < keys.length; j++) {
        const k = keys[j]!;
        if (realKeys[j] !== k) return undefined;
        const want = shape[k];
        const v = real[k];
        if (want instanceof Opaque) {
          if (typeof v !== 'string') return undefined;
          neutral.originals[want.index] = v;
        } else if (want !== v) return undefined;
      }
    }
    return { ids: this.encodeCut(spec, neutral), drift: spec.drift };
  }

  private continueWith(context: TemplateMessage[], reply: TemplateMessage[], next: TemplateMessage[], h: ContinuationHistory, tools: readonly ToolSpec[], whole: boolean, known?: RawRender): { ids: TokenIds; drift: Drift; after?: RawRender } | undefined {
    let before: RawRender;
    let open: RawRender;
    let after: RawRender;
    try {
      before = known ?? this.renderRaw(context, tools, false);
      // The window's generation prompt is the template's usual one (one render fewer per call);
      // the check against the full render, which renders it for real, catches a template whose
      // generation prompt depends on the conversation.
      const gp = whole ? null : this.generationPrompt();
      open = gp === null ? this.renderRaw(context, tools, true) : { raw: before.raw + gp, neutral: before.neutral };
      after = this.renderRaw([...context, ...reply, ...next], tools, true);
      if (before.neutral.plain !== after.neutral.plain || open.neutral.plain !== after.neutral.plain) {
        // One render of the original text, another hidden: their raw texts do not line up; all hidden.
        before = this.renderRaw(context, tools, false, true);
        open = gp === null ? this.renderRaw(context, tools, true, true) : { raw: before.raw + gp, neutral: before.neutral };
        after = this.renderRaw([...context, ...reply, ...next], tools, true, true);
      }
    } catch (err) {
      if (!whole) return undefined;
      throw err;
    }
    const cut = this.cut(before, open, after, h, whole);
    return cut && { ids: this.encodeCut(cut, after.neutral), drift: cut.drift, after };
  }

  /**
   * The continuation in `after` (the context, the reply and the new messages rendered), given the
   * context's render without and with the generation prompt: the text after the reply's stop
   * marker, and how the reply's segment drifts from what the engine generated. Undefined (or,
   * `whole`, an error) when `after` does not extend the context's render.
   */
  private cut(before: RawRender, open: RawRender, after: RawRender, h: ContinuationHistory, whole: boolean): Cut | undefined {
    const b = before.neutral.restore(before.raw);
    const a = after.neutral.restore(after.raw);
    const g = open.neutral.restore(open.raw);
    if (!g.startsWith(b) || !a.startsWith(b)) {
      if (!whole) return undefined;
      throw new ClawGymError(ErrorCodes.TEMPLATE_FAILED, 'the chat template does not render a conversation as an extension of its earlier messages; it cannot be continued');
    }
    // The reply's segment in the new render ends at the first stop marker after the generation prompt.
    const stop = this.stopAfter(after.raw, before.raw.length, after.neutral);
    if (!stop) throw new ClawGymError(ErrorCodes.TEMPLATE_FAILED, `the chat template writes no stop token (${this.stopTexts.join(', ')}) after an assistant reply`);
    const generated = h.finishReason === 'stop' || h.finishReason === 'tool_calls';
    return {
      tail: after.raw.slice(stop.end), start: stop.end, ...(generated ? {} : { lead: stop.id }),
      drift: this.drift(after.raw.slice(before.raw.length, stop.end), after.neutral, g.slice(b.length), open, before, h, generated, stop.id),
    };
  }

  /** A cut's ids: the stop id it leads with, if any, then its tail encoded. */
  private encodeCut(cut: Cut, neutral: Neutralizer): TokenIds {
    const lead = new IdChunks();
    if (cut.lead !== undefined) lead.push(cut.lead);
    return this.encodeRaw(cut.tail, neutral, lead);
  }

  /** Compare the template's render of the reply with the raw ids the engine generated. */
  private drift(segmentRaw: string, neutral: Neutralizer, genPrompt: string, open: RawRender, before: RawRender, h: ContinuationHistory, generated: boolean, stopId: number): Drift {
    const tok = this.o.tokenizer;
    const raw = [...h.outputIds, ...(generated ? [] : [stopId])];
    const template = neutral.restore(segmentRaw);
    const engine = genPrompt + tok.decode(raw);
    if (template !== engine) {
      const think = thinkRe.exec(engine);
      if (think && !thinkRe.test(template)) {
        // Qwen3 writes an empty <think></think> on the latest reply only; earlier empty ones go.
        return /^<think>\s*<\/think>$/.test(think[0])
          ? { class: 'realigned', reason: 'the template writes the reply\'s empty <think></think> only while it is the latest turn; the raw ids the engine saw are kept' }
          : { class: 'realigned', reason: 'the template drops the reply\'s <think> reasoning once a new user turn follows; the raw ids the engine saw are kept' };
      }
      let i = 0;
      while (i < template.length && template[i] === engine[i]) i++;
      return { class: 'realigned', reason: `the template re-renders the reply (first difference at character ${i}: generated ${JSON.stringify(engine.slice(i, i + 24))}, template ${JSON.stringify(template.slice(i, i + 24))}); the raw ids are kept` };
    }
    // Same text; the ids may still differ where the model tokenized its reply unlike the tokenizer.
    const promptPart = this.encodeRaw(open.raw.slice(before.raw.length), open.neutral);
    const reencoded = tok.encodeMarkup(engine);
    const ours = [...promptPart, ...raw];
    if (reencoded.length !== ours.length || reencoded.some((id, k) => id !== ours[k])) {
      return { class: 'realigned', reason: `the reply's ids are not the tokenizer's encoding of its text (${raw.length} generated ids, ${reencoded.length - promptPart.length} on re-encoding); the raw ids are kept` };
    }
    return { class: 'clean', reason: 'the reused prompt equals the template\'s render of the whole conversation' };
  }

  renderContinuation(next: CanonicalMessage[], finishReason: FinishReason): TokenIds {
    // Without history, the continuation is rendered after an empty context with an empty reply.
    return this.continueFrom({ messages: [], reply: { role: 'assistant', parts: [] }, tools: [], outputIds: [], finishReason }, next).ids;
  }

  /** Ids the model would generate for this reply: the template's render of it, through the stop id. */
  renderReply(parts: readonly MessagePart[], tools: readonly ToolSpec[] = []): number[] {
    const user: TemplateMessage = { role: 'user', content: 'x' };
    const reply = toTemplateMessages([{ role: 'assistant', parts: [...parts] }]);
    let open = this.renderRaw([user], tools, true);
    let full = this.renderRaw([user, ...reply], tools, false);
    if (open.neutral.plain !== full.neutral.plain) {
      open = this.renderRaw([user], tools, true, true);
      full = this.renderRaw([user, ...reply], tools, false, true);
    }
    const start = open.raw.length;
    const stop = this.stopAfter(full.raw, start, full.neutral);
    if (!full.raw.startsWith(open.raw) || !stop) throw new ClawGymError(ErrorCodes.TEMPLATE_FAILED, 'the chat template does not render an assistant reply after its generation prompt');
    return Array.from(this.encodeRaw(full.raw.slice(start, stop.end), full.neutral));
  }

  streamParser(tools?: readonly ToolSpec[]): OutputStreamParser {
    this.reasoningStart ??= this.startsInReasoning();
    return idStreamParser(this.o.tokenizer.streamDecoder(), this.family.parser({ tools, startInReasoning: this.reasoningStart }), this.skipIds);
  }

  parse(outputIds: readonly number[], tools?: readonly ToolSpec[]): CanonicalMessage {
    const p = this.streamParser(tools);
    return eventsToMessage([...outputIds.flatMap((id) => p.push(id)), ...p.end()]);
  }
}
