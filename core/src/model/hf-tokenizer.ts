import type { Tokenizer as HfLibTokenizerType } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };

// The package is ESM with a CommonJS build for Node's require (its "exports"); core is CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tokenizer: HfLibTokenizer } = require('@huggingface/tokenizers') as { Tokenizer: typeof HfLibTokenizerType };
type HfLibTokenizer = HfLibTokenizerType;
import type { Tokenizer } from '../contracts/engine';
import { appendAll } from '../util/append';

interface AddedToken { id: number; content: string; special?: boolean }

/** Escape a string for a RegExp. */
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether an added token is *control markup* that message text must never produce: every token
 * marked special, the `<|…|>` / `<｜…｜>` forms, and tag-like tokens the chat template writes
 * (Qwen3's `<tool_call>` and `<think>` are added but not "special"). Gemma's added `<table>` or
 * "\n\n" are ordinary text tokens and stay in the text vocabulary.
 */
function isControl(t: AddedToken, template: string): boolean {
  if (t.special) return true;
  if (/^<[|｜].*[|｜]>$/su.test(t.content)) return true;
  return !/\s/u.test(t.content) && /[<>[\]|]/u.test(t.content) && template.includes(t.content);
}

/**
 * A Hugging Face `tokenizer.json` tokenizer (via `@huggingface/tokenizers`) that keeps template
 * markup and message text apart. {@link encode} is for text from messages: it can never yield a
 * control id, however the text looks (a tool result holding `<|im_end|>` stays plain text).
 * {@link encodeMarkup} is for text the template wrote: control tokens in it become their ids,
 * and the text between them is encoded as {@link encode} does — exactly what the Rust tokenizer
 * does with a rendered prompt (added tokens are split off first, each piece encoded on its own).
 */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  /** Control token text → id. */
  readonly control: ReadonlyMap<string, number>;
  private readonly controlById = new Map<number, string>();
  private readonly controlRe?: RegExp;
  private readonly full: HfLibTokenizer;
  private readonly plain: HfLibTokenizer;

  constructor(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown>, template = '') {
    const added = (tokenizerJson.added_tokens as AddedToken[] | undefined) ?? [];
    const control = new Map<string, number>();
    for (const t of added) if (isControl(t, template)) control.set(t.content, t.id);
    this.control = control;
    for (const [k, v] of control) this.controlById.set(v, k);
    const config = { ...tokenizerConfig, clean_up_tokenization_spaces: false };
    this.full = new HfLibTokenizer(tokenizerJson, config);
    // The text vocabulary: the same tokenizer without the control tokens as added tokens.
    const decoder = (tokenizerConfig.added_tokens_decoder ?? {}) as Record<string, AddedToken>;
    this.plain = new HfLibTokenizer(
      { ...tokenizerJson, added_tokens: added.filter((t) => !control.has(t.content)) },
      { ...config, added_tokens_decoder: Object.fromEntries(Object.entries(decoder).filter(([, t]) => !control.has(t.content))) },
    );
    if (control.size) this.controlRe = new RegExp([...control.keys()].sort((a, b) => b.length - a.length).map(escapeRe).join('|'), 'gu');
    const modelVocab = Object.keys(((tokenizerJson.model as { vocab?: object })?.vocab) ?? {}).length;
    this.vocabSize = Math.max(modelVocab, ...added.map((t) => t.id + 1));
  }

  /** Encode text from a message: never a control id. */
  encode(text: string): number[] {
    return text ? this.plain.encode(text, { add_special_tokens: false }).ids : [];
  }

  /** Encode text the template wrote: control tokens become their ids, the rest as {@link encode}. */
  encodeMarkup(text: string): number[] {
    const out: number[] = [];
    if (!this.controlRe) return this.encode(text);
    let last = 0;
    for (const m of text.matchAll(this.controlRe)) {
      // appendAll, not push(...): a large tool result is more ids than a call can take as arguments.
      if (m.index > last) appendAll(out, this.encode(text.slice(last, m.index)));
      out.push(this.control.get(m[0])!);
      last = m.index + m[0].length;
    }
    if (last < text.length) appendAll(out, this.encode(text.slice(last)));
    return out;
  }

  /** The id of a token's text (control or ordinary), if it is one token. */
  tokenId(content: string): number | undefined {
    return this.control.get(content) ?? this.full.token_to_id(content);
  }

  isControl(id: number): boolean {
    return this.controlById.has(id);
  }

  /** Decode ids; control tokens decode to their text, and spaces are left as the tokens have them. */
  decode(ids: ArrayLike<number>): string {
    return ids.length ? this.full.decode(Array.from(ids), { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : '';
  }

  /**
   * A decoder for streamed ids that returns only complete text, in the manner of vLLM's
   * incremental detokenizer (a prefix and a read offset): a character split across tokens, or
   * a leading space a decoder would strip, comes out once it is certain.
   */
  streamDecoder(): { push(id: number): string; end(): string } {
    const ids: number[] = [];
    let prefix = 0;
    let read = 0;
    const step = (final: boolean): string => {
      const before = this.decode(ids.slice(prefix, read));
      const after = this.decode(ids.slice(prefix));
      if (after.length <= before.length || (!final && after.endsWith('\uFFFD'))) return '';
      prefix = read;
      read = ids.length;
      return after.slice(before.length);
    };
    return {
      push: (id) => { ids.push(id); return step(false); },
      end: () => step(true),
    };
  }
}
