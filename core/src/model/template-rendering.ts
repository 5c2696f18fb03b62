import type { TokenIds } from '../contracts/engine';
import type { ToolSpec } from '../contracts/messages';
import { IdChunks } from '../util/id-chunks';
import { isSettled } from '../util/settled';
import type { Family } from './families';
import type { HfTokenizer } from './hf-tokenizer';
import { JinjaRenderer, type Prepared } from './jinja-env';
import { lookAlikeRegex, Neutralizer } from './neutralize';
import { templateTools, type TemplateMessage } from './template-messages';

/** Options of {@link JinjaChatTemplate}. */
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

/** Tools in the template's shape; none is `undefined` (vLLM passes `tools=None`). */
export const templateToolsOf = (tools: readonly ToolSpec[]) => (tools.length ? templateTools(tools) : undefined);

/** Tools prepared for the interpreter, with the texts the neutralizer replaced in them. */
type PreparedTools = { value: Prepared; originals: readonly string[] };

/**
 * A model's Jinja chat template rendered and encoded: what Python's `apply_chat_template` writes
 * (see jinja-env.ts), with look-alikes of control tokens in message text neutralized, encoded so
 * that markup becomes control ids and message text never does. Tool lists and long segments are
 * prepared and encoded once (a harness sends the same at every call).
 */
export class TemplateRendering {
  readonly stopIds: readonly number[];
  private readonly renderer: JinjaRenderer;
  protected readonly lookAlike: RegExp;
  private readonly splitRe?: RegExp;
  protected readonly stopTexts: string[];

  constructor(protected readonly o: JinjaTemplateOptions) {
    this.renderer = new JinjaRenderer(o.source, o.now);
    this.stopIds = [...new Set(o.stopIds)];
    this.lookAlike = lookAlikeRegex(o.tokenizer.control.keys());
    this.splitRe = o.tokenizer.controlPattern;
    this.stopTexts = this.stopIds.map((id) => o.tokenizer.decode([id])).filter(Boolean);
  }

  /** Render template messages; placeholders stay in until encoding. */
  protected renderRaw(messages: readonly TemplateMessage[], tools: readonly ToolSpec[], addGenerationPrompt: boolean): RawRender {
    return this.renderWith(messages, this.toolsOf(tools), addGenerationPrompt);
  }

  /** Tools prepared for rendering; a settled list (the session's stand-in tools) cannot change: prepared once, found by identity. */
  protected toolsOf(tools: readonly ToolSpec[]): PreparedTools | undefined {
    if (tools.length && isSettled(tools)) {
      let t = this.settledTools.get(tools);
      if (!t) this.settledTools.set(tools, (t = this.preparedTools(templateTools(tools))));
      return t;
    }
    const list = templateToolsOf(tools);
    return list ? this.preparedTools(list) : undefined;
  }

  /** Settled values found to hold no look-alike (see Neutralizer). */
  private readonly cleanValues = new WeakSet<object>();

  private readonly settledTools = new WeakMap<readonly ToolSpec[], PreparedTools>();

  protected renderTemplate(messages: readonly unknown[], tools: readonly unknown[] | undefined, addGenerationPrompt: boolean): RawRender {
    return this.renderWith(messages, tools ? this.preparedTools(tools) : undefined, addGenerationPrompt);
  }

  protected renderWith(messages: readonly unknown[], t: PreparedTools | undefined, addGenerationPrompt: boolean): RawRender;
  protected renderWith(messages: readonly unknown[], t: PreparedTools | undefined, addGenerationPrompt: boolean, opaque: true): RawRender | undefined;
  /** `opaque`: the messages hold {@link Opaque} texts; the compiled form's render only, undefined where it cannot make one. */
  protected renderWith(messages: readonly unknown[], t: PreparedTools | undefined, addGenerationPrompt: boolean, opaque = false): RawRender | undefined {
    const neutral = new Neutralizer(this.lookAlike, t?.originals, this.cleanValues);
    const variables = {
      ...this.o.specialTokens,
      ...this.o.kwargs,
      messages: neutral.apply(messages),
      add_generation_prompt: addGenerationPrompt,
    };
    const prepared: Record<string, Prepared> = t ? { tools: t.value } : {};
    const raw = opaque ? this.renderer.renderCompiled(variables, prepared) : this.renderer.render(variables, prepared);
    return raw === undefined ? undefined : { raw, neutral };
  }

  /**
   * Tool lists, neutralized and converted for the interpreter once: a harness offers the same
   * tools at every call of every session, and their schemas are most of a render's values.
   * Keyed by their JSON; least recently used first out.
   */
  private readonly toolsCache = new Map<string, PreparedTools>();

  private preparedTools(tools: readonly unknown[]): PreparedTools {
    const key = JSON.stringify(tools);
    const hit = this.toolsCache.get(key);
    if (hit) { this.toolsCache.delete(key); this.toolsCache.set(key, hit); return hit; }
    const neutral = new Neutralizer(this.lookAlike);
    const entry = { value: this.renderer.prepare(neutral.apply(tools)), originals: neutral.originals };
    this.toolsCache.set(key, entry);
    if (this.toolsCache.size > 32) this.toolsCache.delete(this.toolsCache.keys().next().value!);
    return entry;
  }

  /**
   * Long text between control tokens, encoded before (a harness's system prompt and tools are
   * the same in every session of a run: BPE costs ~10 µs a token here, so a first call would
   * otherwise spend most of its time re-encoding them). Least recently used first out.
   */
  private readonly segments = new Map<string, TokenIds>();

  /** Short text between control tokens (`user\n`, `assistant\n`, `\n`: the template's own markup, at every call). */
  private readonly shortSegments = new Map<string, TokenIds>();

  private encodeText(text: string): TokenIds {
    if (text.length <= 32) {
      let ids = this.shortSegments.get(text);
      if (!ids) {
        if (this.shortSegments.size >= 4096) this.shortSegments.clear();
        this.shortSegments.set(text, (ids = this.o.tokenizer.encode(text)));
      }
      return ids;
    }
    if (text.length < 512) return this.o.tokenizer.encode(text);
    const hit = this.segments.get(text);
    if (hit) { this.segments.delete(text); this.segments.set(text, hit); return hit; }
    const ids = this.o.tokenizer.encode(text);
    this.segments.set(text, ids);
    if (this.segments.size > 64) this.segments.delete(this.segments.keys().next().value!);
    return ids;
  }

  /** Encode rendered text: control tokens in the markup to their ids, message text as text. */
  protected encodeRaw(raw: string, neutral: Neutralizer, out = new IdChunks()): TokenIds {
    const tok = this.o.tokenizer;
    if (!this.splitRe) { out.add(this.encodeText(neutral.restore(raw))); return out.toIds(); }
    let last = 0;
    for (const m of raw.matchAll(this.splitRe)) {
      if (m.index > last) out.add(this.encodeText(neutral.restore(raw.slice(last, m.index))));
      out.push(tok.control.get(m[0])!);
      last = m.index + m[0].length;
    }
    if (last < raw.length) out.add(this.encodeText(neutral.restore(raw.slice(last))));
    return out.toIds();
  }

  /** Index just past the first stop text at or after `from` in `raw`, with that stop's id. */
  protected stopAfter(raw: string, from: number): { end: number; id: number } | undefined {
    let best: { end: number; id: number; at: number } | undefined;
    this.stopTexts.forEach((t, i) => {
      const at = raw.indexOf(t, from);
      if (at >= 0 && (!best || at < best.at)) best = { at, end: at + t.length, id: this.stopIds[i]! };
    });
    return best;
  }

  private genPrompt?: string | null;

  /**
   * The text `add_generation_prompt` appends, when it appends the same text after two different
   * conversations (null when it does not, or when the template refuses the probes).
   */
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
}
