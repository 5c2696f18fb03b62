import type { Tokenizer as HfLibTokenizerType } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };

// The package is ESM with a CommonJS build for Node's require (its "exports"); core is CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tokenizer: HfLibTokenizer } = require('@huggingface/tokenizers') as { Tokenizer: typeof HfLibTokenizerType };
type HfLibTokenizer = HfLibTokenizerType;
import { IdChunks, type TokenIds, type Tokenizer } from '@clawgym/core';
import { asciiSplitFor, PieceTable, type AsciiSplit } from './ascii-split';
import { byteLevelDecoder } from './byte-level-decoder';

interface AddedToken { id: number; content: string; special?: boolean }

const DECODE_OPTIONS = { skip_special_tokens: false, clean_up_tokenization_spaces: false };

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
 * First-stage split patterns (Qwen2/3, Llama 3, gpt-oss) under which a text cuts cleanly between
 * a newline and a letter or digit: no alternative matches a newline followed by `\p{L}` or `\p{N}`
 * (a newline is only ever at the end of a match, or alone), and none looks behind, so the pieces
 * of the two parts are the pieces of the whole. Long text is pre-tokenized a part at a time there:
 * the library makes a string per piece, ~40 bytes a piece held at once for a 30 MB tool result.
 */
const NEWLINE_CUT_PATTERNS = new Set([
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
]);
const EMPTY = new Int32Array(0);
/** Characters pre-tokenized at a time where {@link NEWLINE_CUT_PATTERNS} allow. */
const PART_CHARS = 1 << 16;
const newlineCut = /\n(?=[\p{L}\p{N}])/gu;

/** `text` in parts of about {@link PART_CHARS}, cut only after a newline before a letter or digit. */
function* partsOf(text: string, cut: boolean): Generator<string> {
  if (!cut || text.length <= PART_CHARS) { yield text; return; }
  let start = 0;
  while (text.length - start > PART_CHARS) {
    newlineCut.lastIndex = start + PART_CHARS;
    const m = newlineCut.exec(text);
    if (!m) break;
    yield text.slice(start, m.index + 1);
    start = m.index + 1;
  }
  yield text.slice(start);
}

/** The library's internals the piece cache uses (see {@link HfTokenizer}'s `pieces`). */
interface LibStage { pre_tokenize(text: string | string[], options?: { section_index: number }): string[]; tokenizers?: (LibStage | null)[]; pattern?: RegExp | null; config?: { pattern?: { Regex?: string }; behavior?: string; invert?: boolean } }
interface LibInternals {
  normalizer: ((s: string) => string) | null;
  pre_tokenizer: LibStage | null;
  model: ((tokens: string[]) => string[]) & { tokens_to_ids: Map<string, number>; unk_token_id?: number };
  added_tokens: unknown[];
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}
interface PieceCache {
  normalize?: (s: string) => string;
  first: LibStage;
  rest: (LibStage | null)[];
  model: (tokens: string[]) => string[];
  vocab: Map<string, number>;
  unk?: number;
  /** Each piece's ids, looked up by its range of the text (see {@link PieceTable}). */
  table: PieceTable;
  /** Whether long text may be pre-tokenized in parts ({@link partsOf}). */
  cut: boolean;
  /** The first stage's pattern, where its pieces are its matches (see {@link firstPieces}). */
  pattern?: RegExp;
  /** That pattern's scanner for ASCII text, where there is one ({@link asciiSplitFor}), and the pattern made sticky, for the pieces the scanner leaves to it. */
  split?: { scan: AsciiSplit; sticky: RegExp };
}

/**
 * The first stage's pieces of `text`. Where the stage is an isolating split whose pattern covers
 * every character ({@link NEWLINE_CUT_PATTERNS}) its pieces are the pattern's matches, found in
 * one native `match` rather than the library's per-match objects and copies (the split runs on
 * every text a call encodes); the matches are used only when they tile the text, which is when
 * the library's split gives exactly them (it adds the gaps between matches and drops empty ones).
 */
function firstPieces(p: PieceCache, text: string): string[] {
  if (p.pattern) {
    const m = text.match(p.pattern);
    if (m) {
      let total = 0;
      let empty = false;
      for (const x of m) { total += x.length; if (!x) empty = true; }
      if (total === text.length) return empty ? m.filter((x) => x) : m;
    }
  }
  return p.first.pre_tokenize(text, { section_index: 0 });
}

/** Unicode normalizations, under which ASCII text is unchanged. */
const UNICODE_FORMS = new Set(['NFC', 'NFD', 'NFKC', 'NFKD']);
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

function pieceCache(tokenizer: HfLibTokenizer, normalizerType: unknown): PieceCache | undefined {
  const lib = tokenizer as unknown as LibInternals;
  if (lib.added_tokens?.length || lib.remove_space || lib.do_lowercase_and_remove_accent || !lib.pre_tokenizer || typeof lib.model !== 'function' || !(lib.model.tokens_to_ids instanceof Map)) return undefined;
  const stages = Array.isArray(lib.pre_tokenizer.tokenizers) ? lib.pre_tokenizer.tokenizers : [lib.pre_tokenizer];
  const [first, ...rest] = stages;
  if (!first || typeof first.pre_tokenize !== 'function') return undefined;
  const libNormalize = lib.normalizer ?? undefined;
  // A Unicode normalization leaves ASCII text as it is (most of a harness's text): not run there.
  const normalize = libNormalize && typeof normalizerType === 'string' && UNICODE_FORMS.has(normalizerType) ? (t: string) => (ASCII.test(t) ? t : libNormalize(t)) : libNormalize;
  const p: PieceCache = {
    normalize, first, rest, model: lib.model, vocab: lib.model.tokens_to_ids, unk: lib.model.unk_token_id, table: new PieceTable(),
    cut: NEWLINE_CUT_PATTERNS.has(first.config?.pattern?.Regex ?? '') && first.config?.behavior === 'Isolated' && !first.config.invert,
  };
  if (p.cut && first.pattern instanceof RegExp && first.pattern.global) p.pattern = first.pattern;
  const scan = asciiSplitFor(p.pattern);
  if (scan) p.split = { scan, sticky: new RegExp(p.pattern!.source, `${p.pattern!.flags}y`) };
  // The post-processor must add nothing when special tokens are off: compare on a probe.
  const probe = 'Hello, world! 123  \n\tcafé 你好';
  const lib2 = tokenizer.encode(probe, { add_special_tokens: false }).ids;
  const normalized = p.normalize ? p.normalize(probe) : probe;
  const ours = p.first.pre_tokenize(normalized, { section_index: 0 }).flatMap((piece) => p.model(p.rest.reduce((pre, st) => (st ? st.pre_tokenize(pre, { section_index: 0 }) : pre), [piece])).map((t) => p.vocab.get(t) ?? p.unk!));
  return ours.length === lib2.length && ours.every((id, i) => id === lib2[i]) ? p : undefined;
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
  /**
   * The control tokens as one pattern (longest first), for splitting text the template wrote;
   * undefined without control tokens. Global: read it with `matchAll`, which copies it.
   */
  readonly controlPattern?: RegExp;
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
    this.pieces = pieceCache(this.plain, (tokenizerJson.normalizer as { type?: unknown } | null | undefined)?.type);
    this.fastDecode = byteLevelDecoder(this.full);
    // Kept only if it gives the library's text on a probe: multi-byte text, control tokens, a character cut between ids.
    if (this.fastDecode) {
      const enc = (t: string) => this.full.encode(t, { add_special_tokens: false }).ids as number[];
      const probe = enc('Hello, world!\n\t你好 🙂 café');
      const ids = [...probe, ...[...control.values()].slice(0, 4), ...enc('𝄞🙂').slice(0, 1), ...probe];
      if (this.fastDecode(ids) !== this.full.decode(ids, DECODE_OPTIONS)) this.fastDecode = undefined;
    }
    // Literal alternatives, matched by code unit (no `u` flag: faster, and a token never starts inside a character).
    if (control.size) this.controlPattern = new RegExp([...control.keys()].sort((a, b) => b.length - a.length).map(escapeRe).join('|'), 'g');
    const modelVocab = Object.keys(((tokenizerJson.model as { vocab?: object })?.vocab) ?? {}).length;
    this.vocabSize = Math.max(modelVocab, ...added.map((t) => t.id + 1));
  }

  /** Encode text from a message: never a control id. */
  encode(text: string): TokenIds {
    if (!text) return new Int32Array(0);
    if (!this.pieces) return Int32Array.from(this.plain.encode(text, { add_special_tokens: false }).ids);
    // The library's own pipeline, with the ids of each first-stage piece remembered (see PieceCache).
    const p = this.pieces;
    const normalized = p.normalize ? p.normalize(text) : text;
    if (!normalized) return new Int32Array(0);
    // Text of one part (nearly all text a call encodes) goes straight to its ids.
    if (normalized.length <= PART_CHARS) return this.encodePart(p, normalized);
    const parts = new IdChunks();
    for (const part of partsOf(normalized, p.cut)) parts.add(this.encodePart(p, part));
    return parts.toIds();
  }

  /**
   * {@link encode}'s ids added to `out`: a long text's parts one by one, so that a caller joining
   * them with more ids copies them once (joined here first, a 28 MB tool result's 17M ids were
   * copied twice).
   */
  encodeTo(text: string, out: IdChunks): void {
    const p = this.pieces;
    if (!p) { out.add(this.encode(text)); return; }
    const normalized = p.normalize ? p.normalize(text) : text;
    for (const part of partsOf(normalized, p.cut)) this.encodePart(p, part, out);
  }

  /** The ids of one part: into `into` when given (then the return value is not to be used), else joined. */
  private encodePart(p: PieceCache, part: string, into?: IdChunks): TokenIds {
    // The pieces' remembered ids, joined once into a typed array of the final size.
    if (p.split) {
      // Pieces found by the scanner and looked up by their range: no string made for a piece
      // already known. Where a character outside ASCII decides a piece, the pattern matches that
      // piece at that place (the split's pieces depend only on where they start: no look-behind).
      const { scan, sticky } = p.split;
      // Pieces go to a list of their own first: where the scanner gives up, the part is done again the library's way.
      const out = new IdChunks();
      let i = 0;
      for (let j; i < part.length; i = j) {
        j = scan(part, i);
        if (j < 0) {
          sticky.lastIndex = i;
          const m = sticky.exec(part);
          if (!m || !m[0]) break; // not a tiling after all: the library's own split below
          j = i + m[0].length;
        }
        out.add(this.idsOf(p, part, i, j));
      }
      if (i >= part.length) return this.joined(out, into);
    }
    const out = new IdChunks();
    for (const piece of firstPieces(p, part)) out.add(this.idsOf(p, piece, 0, piece.length));
    return this.joined(out, into);
  }

  /** `out`'s ids moved into `into` when there is one, else joined. */
  private joined(out: IdChunks, into: IdChunks | undefined): TokenIds {
    if (!into) return out.toIds();
    into.take(out);
    return EMPTY;
  }

  /** The ids of the first-stage piece `text[a, b)`: from the table when remembered (no string made). */
  private idsOf(p: PieceCache, text: string, a: number, b: number): readonly number[] {
    return p.table.get(text, a, b) ?? this.pieceIds(p, a === 0 && b === text.length ? text : text.slice(a, b));
  }

  /** A first-stage piece through the rest of the library's pipeline (later stages, BPE), remembered. */
  private pieceIds(p: PieceCache, piece: string): readonly number[] {
    const tokens = p.model(p.rest.reduce((pre, stage) => (stage ? stage.pre_tokenize(pre, { section_index: 0 }) : pre), [piece]));
    const ids = tokens.map((t) => p.vocab.get(t) ?? p.unk!);
    p.table.set(piece, ids);
    return ids;
  }

  /**
   * BPE costs ~10 µs a token in the library, mostly per piece (byte mapping, merges), and a
   * harness's text repeats its pieces (words, paths, indentation) endlessly. The library's
   * pipeline is compositional after its first pre-tokenizer stage — later stages and the model
   * work on each piece alone — so the ids of a piece are a function of the piece: remembered,
   * they cost a lookup. Used only where nothing else can change the result: no added tokens
   * left in the text vocabulary (they would split the text first), no whitespace or accent
   * rewriting, and a post-processor that adds nothing without special tokens (checked on a probe).
   */
  private readonly pieces?: PieceCache;

  /** Encode text the template wrote: control tokens become their ids, the rest as {@link encode}. */
  encodeMarkup(text: string): TokenIds {
    if (!this.controlPattern) return this.encode(text);
    const out = new IdChunks();
    let last = 0;
    for (const m of text.matchAll(this.controlPattern)) {
      if (m.index > last) out.add(this.encode(text.slice(last, m.index)));
      out.push(this.control.get(m[0])!);
      last = m.index + m[0].length;
    }
    if (last < text.length) out.add(this.encode(text.slice(last)));
    return out.toIds();
  }

  /** The id of a token's text (control or ordinary), if it is one token. */
  tokenId(content: string): number | undefined {
    return this.control.get(content) ?? this.full.token_to_id(content);
  }

  isControl(id: number): boolean {
    return this.controlById.has(id);
  }

  /** See {@link byteLevelDecoder}. */
  private readonly fastDecode?: (ids: ArrayLike<number>) => string | undefined;

  /** Decode ids; control tokens decode to their text, and spaces are left as the tokens have them. */
  decode(ids: ArrayLike<number>): string {
    if (ids.length === 1) {
      // One id decodes the same wherever it stands (the decoders see it as the whole sequence):
      // remembered, since streaming decodes each new token on its own (see streamDecoder).
      const id = ids[0]!;
      const hit = this.decoded.get(id);
      if (hit !== undefined) return hit;
      const text = this.fastDecode?.(ids) ?? this.full.decode([id], DECODE_OPTIONS);
      if (this.decoded.size >= 65_536) this.decoded.clear();
      this.decoded.set(id, text);
      return text;
    }
    if (this.fastDecode && ids.length) {
      const text = this.fastDecode(ids);
      if (text !== undefined) return text;
    }
    return ids.length ? this.full.decode(Array.from(ids), DECODE_OPTIONS) : '';
  }

  /** Text of single ids already decoded (see {@link decode}). */
  private readonly decoded = new Map<number, string>();

  /**
   * A decoder for streamed ids that returns only complete text, in the manner of vLLM's
   * incremental detokenizer (a prefix and a read offset): a character split across tokens, or
   * a leading space a decoder would strip, comes out once it is certain.
   */
  streamDecoder(): { push(id: number): string; pushMany(ids: readonly number[]): string; end(): string } {
    const ids: number[] = [];
    let prefix = 0;
    let read = 0;
    // The text of ids[prefix, read) changes only when they move: decoded once per move.
    let before = '';
    const step = (final: boolean): string => {
      const after = this.decode(ids.slice(prefix));
      if (after.length <= before.length || (!final && after.endsWith('\uFFFD'))) return '';
      const emitted = after.slice(before.length);
      prefix = read;
      read = ids.length;
      before = this.decode(ids.slice(prefix, read));
      return emitted;
    };
    return {
      push: (id) => { ids.push(id); return step(false); },
      // The text of ids pushed one by one, decoded once (only the last step's text is kept back).
      pushMany: (many) => { for (const id of many) ids.push(id); return step(false); },
      end: () => step(true),
    };
  }
}
