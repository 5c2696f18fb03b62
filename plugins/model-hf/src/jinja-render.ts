import { IdChunks, isSettled, ownString, type TokenIds, type CanonicalConversation, type ToolSpec } from '@clawgym/core';
import { detectFamily, type Family } from './families';
import type { HfTokenizer } from './hf-tokenizer';
import { JinjaRenderer, type Prepared } from './jinja-env';
import { hideInspectedLiterals } from './inspected-literals';
import { LookAlikes, Neutralizer, Opaque, type NeutralSeed } from './neutralize';
import { templateTools, toTemplateMessages, type TemplateMessage } from './template-messages';

/** Characters of long text segments a template keeps encoded (a run's system prompts and tool lists fit many times over). */
const SEGMENT_CACHE_CHARS = 1 << 22;

/** Options of {@link JinjaRendering} and the chat template built on it. */
export interface JinjaTemplateOptions {
  tokenizer: HfTokenizer;
  /** The Jinja source (`chat_template`). */
  source: string;
  /** Ids that end generation: the model's eos ids. */
  stopIds: readonly number[];
  /** `bos_token`, `eos_token`, …: the special-token strings templates are rendered with. */
  specialTokens?: Record<string, string>;
  /** Extra template variables, e.g. `{ enable_thinking: false }`. */
  kwargs?: Record<string, unknown>;
  /** The clock of `strftime_now` (tests pin it). */
  now?: () => Date;
  /** Override the family read from the template (parsing of tool calls and reasoning). */
  family?: Family;
}

/** A rendered prompt: its text and its ids. */
export interface Rendered { text: string; ids: TokenIds }

/** The rendered text with placeholders still in, and how to encode it. */
export interface RawRender { raw: string; neutral: Neutralizer }

/** A tool list converted for rendering, and what its neutralizing left (see Neutralizer). */
export interface PreparedTools { value: Prepared; seed: NeutralSeed }

/** The tools of a render, prepared with look-alikes hidden or (`plain`) left in. */
export type ToolsFor = (plain: boolean) => PreparedTools | undefined;

/** Tools in the template's shape; none is `undefined` (vLLM passes `tools=None`). */
const templateToolsOf = (tools: readonly ToolSpec[]) => (tools.length ? templateTools(tools) : undefined);

/**
 * A model's own Jinja chat template over its own tokenizer, rendering and encoding: renders exactly
 * what Python's `apply_chat_template` writes (see jinja-env.ts) and encodes markup to control ids
 * and message text never to them. {@link JinjaChatTemplate} continues conversations with it.
 */
export class JinjaRendering {
  readonly name: string;
  readonly stopIds: readonly number[];
  readonly family: Family;
  protected readonly renderer: JinjaRenderer;
  /** The template as written, for renders of the original messages (the same renderer when `renderer` rewrote nothing). */
  protected plainRenderer?: JinjaRenderer;
  protected readonly looks: LookAlikes;
  protected readonly splitRe?: RegExp;
  protected readonly stopTexts: string[];
  protected readonly skipIds: Set<number>;

  constructor(protected readonly o: JinjaTemplateOptions) {
    this.looks = new LookAlikes(o.tokenizer.control.keys());
    this.renderer = new JinjaRenderer(o.source, o.now, undefined, (parsed) => hideInspectedLiterals(parsed, (s) => this.looks.hide(s)));
    this.family = o.family ?? detectFamily(o.source, o.tokenizer.control);
    this.name = `jinja:${this.family.name}`;
    this.stopIds = [...new Set(o.stopIds)];
    this.splitRe = o.tokenizer.controlPattern;
    this.stopTexts = this.stopIds.map((id) => o.tokenizer.decode([id])).filter(Boolean);
    this.skipIds = new Set(this.stopIds);
  }

  /** Render template messages; placeholders stay in until encoding. `hidden`: look-alikes hidden whatever the template does. */
  protected renderRaw(messages: readonly TemplateMessage[], tools: readonly ToolSpec[], addGenerationPrompt: boolean, hidden = false): RawRender {
    return this.renderWith(messages, (plain) => this.toolsOf(tools, plain), addGenerationPrompt, false, hidden)!;
  }

  /** Tools prepared for rendering; a settled list (the session's stand-in tools) cannot change: prepared once, found by identity. */
  protected toolsOf(tools: readonly ToolSpec[], plain: boolean): PreparedTools | undefined {
    if (tools.length && isSettled(tools)) {
      const cache = this.settledTools[plain ? 1 : 0];
      let t = cache.get(tools);
      if (!t) cache.set(tools, (t = this.preparedTools(templateTools(tools), plain)));
      return t;
    }
    const list = templateToolsOf(tools);
    return list ? this.preparedTools(list, plain) : undefined;
  }

  /** Settled values found to hold no look-alike (see Neutralizer). */
  protected readonly cleanValues = new WeakSet<object>();

  protected readonly settledTools = [new WeakMap<readonly ToolSpec[], PreparedTools>(), new WeakMap<readonly ToolSpec[], PreparedTools>()] as const;

  protected renderTemplate(messages: readonly unknown[], tools: readonly unknown[] | undefined, addGenerationPrompt: boolean): RawRender {
    return this.renderWith(messages, (plain) => (tools ? this.preparedTools(tools, plain) : undefined), addGenerationPrompt)!;
  }

  /**
   * Render with the look-alikes in message text hidden (neutralize.ts). Where the text holds any,
   * the original messages are rendered too, by the template as written: if the two texts differ
   * (the template looked inside the text other than with the literals it was rewritten for), the
   * original render is taken when no token of its look-alikes is also markup in the hidden render
   * — then the tokenizer can tell text from markup by the token alone (Neutralizer.found);
   * otherwise the hidden render stands (its markup is certain; its text may differ from Python's).
   * `opaque`: the messages hold {@link Opaque} texts; the compiled form's render only, undefined
   * where it cannot make one. `hidden`: the hidden render only.
   */
  protected renderWith(messages: readonly unknown[], tools: ToolsFor, addGenerationPrompt: boolean, opaque = false, hidden = false): RawRender | undefined {
    const render = this.renderOnce(this.renderer, messages, tools(false), addGenerationPrompt, opaque, false);
    if (!render || hidden || !render.neutral.met) return render;
    this.plainRenderer ??= this.renderer.rewritten ? new JinjaRenderer(this.o.source, this.o.now) : this.renderer;
    let original: RawRender | undefined;
    try {
      original = this.renderOnce(this.plainRenderer, messages, tools(true), addGenerationPrompt, opaque, true);
    } catch { return render; /* the template refuses the original text: the hidden render stands */ }
    if (!original || original.neutral.restore(original.raw) === render.neutral.restore(render.raw)) return render;
    if (this.splitRe) for (const m of render.raw.matchAll(this.splitRe)) if (original.neutral.found.has(m[0])) return render;
    return original;
  }

  protected renderOnce(renderer: JinjaRenderer, messages: readonly unknown[], t: PreparedTools | undefined, addGenerationPrompt: boolean, opaque: boolean, plain: boolean): RawRender | undefined {
    const neutral = new Neutralizer(this.looks, t?.seed, this.cleanValues, plain);
    const variables = {
      ...this.o.specialTokens,
      ...this.o.kwargs,
      messages: neutral.apply(messages),
      add_generation_prompt: addGenerationPrompt,
    };
    const prepared: Record<string, Prepared> = t ? { tools: t.value } : {};
    const raw = opaque ? renderer.renderCompiled(variables, prepared) : renderer.render(variables, prepared);
    return raw === undefined ? undefined : { raw, neutral };
  }

  /**
   * Tool lists, neutralized and converted for the interpreter once: a harness offers the same
   * tools at every call of every session, and their schemas are most of a render's values.
   * Keyed by their JSON; least recently used first out.
   */
  protected readonly toolsCache = new Map<string, PreparedTools>();

  protected preparedTools(tools: readonly unknown[], plain: boolean): PreparedTools {
    const key = `${plain ? 'p' : 'h'}${JSON.stringify(tools)}`;
    const hit = this.toolsCache.get(key);
    if (hit) { this.toolsCache.delete(key); this.toolsCache.set(key, hit); return hit; }
    const neutral = new Neutralizer(this.looks, [], undefined, plain);
    const entry = { value: this.renderer.prepare(neutral.apply(tools)), seed: neutral.seed };
    this.toolsCache.set(key, entry);
    if (this.toolsCache.size > 32) this.toolsCache.delete(this.toolsCache.keys().next().value!);
    return entry;
  }

  /**
   * Long text between control tokens, encoded before (a harness's system prompt and tools are
   * the same in every session of a run: BPE costs ~10 µs a token here, so a first call would
   * otherwise spend most of its time re-encoding them). Least recently used first out.
   */
  protected readonly segments = new Map<string, TokenIds>();
  /** The characters of the texts {@link segments} holds. */
  private segmentChars = 0;

  /** Short text between control tokens (`user\n`, `assistant\n`, `\n`: the template's own markup, at every call). */
  protected readonly shortSegments = new Map<string, TokenIds>();

  /** {@link encodeText}'s ids added to `out`; a long text's parts added one by one, never joined on their own first. */
  protected addText(out: IdChunks, text: string): void {
    if (text.length > SEGMENT_CACHE_CHARS / 4) this.o.tokenizer.encodeTo(text, out);
    else out.add(this.encodeText(text));
  }

  protected encodeText(text: string): TokenIds {
    if (text.length <= 32) {
      let ids = this.shortSegments.get(text);
      if (!ids) {
        if (this.shortSegments.size >= 4096) this.shortSegments.clear();
        this.shortSegments.set(ownString(text), (ids = this.o.tokenizer.encode(text)));
      }
      return ids;
    }
    if (text.length < 512) return this.o.tokenizer.encode(text);
    // A segment this long is a tool result or a file, not a prompt every session repeats: kept,
    // it would hold its text and its ids (a 28 MB tool result: 100 MB) after its session ended.
    if (text.length > SEGMENT_CACHE_CHARS / 4) return this.o.tokenizer.encode(text);
    const hit = this.segments.get(text);
    if (hit) { this.segments.delete(text); this.segments.set(text, hit); return hit; }
    const ids = this.o.tokenizer.encode(text);
    this.segments.set(ownString(text), ids);
    this.segmentChars += text.length;
    while (this.segments.size > 64 || this.segmentChars > SEGMENT_CACHE_CHARS) {
      const oldest = this.segments.keys().next().value!;
      this.segments.delete(oldest);
      this.segmentChars -= oldest.length;
    }
    return ids;
  }

  /** Encode rendered text: control tokens in the markup to their ids, message text as text. */
  protected encodeRaw(raw: string, neutral: Neutralizer, out = new IdChunks()): TokenIds {
    const tok = this.o.tokenizer;
    if (!this.splitRe) { this.addText(out, neutral.restore(raw)); return out.toIds(); }
    let last = 0;
    const found = neutral.found;
    for (const m of raw.matchAll(this.splitRe)) {
      // A look-alike left in a render of the original messages is text (see renderWith).
      if (found.size && found.has(m[0])) continue;
      if (m.index > last) this.addText(out, neutral.restore(raw.slice(last, m.index)));
      out.push(tok.control.get(m[0])!);
      last = m.index + m[0].length;
    }
    if (last < raw.length) this.addText(out, neutral.restore(raw.slice(last)));
    return out.toIds();
  }

  /** The prompt of a whole conversation, text and ids (what `clawgym template` prints). */
  renderPrompt(conversation: CanonicalConversation, addGenerationPrompt = true): Rendered {
    return this.renderMessages(toTemplateMessages(conversation.messages), templateToolsOf(conversation.tools), addGenerationPrompt);
  }

  /** Render template messages and tools as given (already in the template's shape). */
  renderMessages(messages: readonly unknown[], tools: readonly unknown[] | undefined, addGenerationPrompt: boolean): Rendered {
    const { raw, neutral } = this.renderTemplate(messages, tools, addGenerationPrompt);
    return { text: neutral.restore(raw), ids: this.encodeRaw(raw, neutral) };
  }

  render(conversation: CanonicalConversation): TokenIds {
    return this.renderPrompt(conversation).ids;
  }

  /** Index just past the first stop text at or after `from` in `raw`, with that stop's id (never a look-alike that `neutral` left in as text). */
  protected stopAfter(raw: string, from: number, neutral: Neutralizer): { end: number; id: number } | undefined {
    let best: { end: number; id: number; at: number } | undefined;
    this.stopTexts.forEach((t, i) => {
      if (neutral.found.has(t)) return;
      const at = raw.indexOf(t, from);
      if (at >= 0 && (!best || at < best.at)) best = { at, end: at + t.length, id: this.stopIds[i]! };
    });
    return best;
  }

  /**
   * The text `add_generation_prompt` appends, when it appends the same text after two different
   * conversations (null when it does not, or when the template refuses the probes).
   */
  protected genPrompt?: string | null;
  protected generationPrompt(): string | null {
    if (this.genPrompt !== undefined) return this.genPrompt;
    const probe = (messages: TemplateMessage[]) => {
      const without = this.renderRaw(messages, [], false).raw;
      const withIt = this.renderRaw(messages, [], true).raw;
      return withIt.startsWith(without) ? withIt.slice(without.length) : null;
    };
    try {
      const a = probe([{ role: 'user', content: 'x' }]);
      const b = probe([{ role: 'system', content: 's' }, { role: 'user', content: 'x' }, { role: 'assistant', content: 'y' }, { role: 'user', content: 'z' }]);
      this.genPrompt = a !== null && a === b ? a : null;
    } catch {
      this.genPrompt = null;
    }
    return this.genPrompt;
  }

  /** The generation prompt's tail decides whether output starts inside a reasoning block. */
  protected startsInReasoning(): boolean {
    try {
      const g = this.renderRaw([{ role: 'user', content: 'x' }], [], true).raw;
      return /<think>\s*$/.test(g);
    } catch { return false; }
  }

  protected reasoningStart?: boolean;
}
