// Types of @huggingface/tokenizers only: hf-tokenizer.ts loads the library.
import type { Tokenizer as HfLibTokenizer } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };

/** The library's internals a byte-level decode reads (see {@link byteLevelDecoder}). */
interface LibDecodeInternals {
  decoder?: { config?: { type?: string }; byte_decoder?: Record<string, number>; added_tokens?: { content: string }[]; end_of_word_suffix?: unknown } | null;
  model?: { vocab?: unknown };
}

/**
 * A decode of a ByteLevel decoder's ids that does what the library does (each token's
 * characters mapped back to bytes and decoded as UTF-8 with replacement, an added token's text
 * as it is, the runs between added tokens decoded apart) without its per-call work: the
 * library maps every id to its token, searches the added tokens for each one and spreads the
 * text into characters at every decode, and the proxy decodes at every streamed token. The
 * bytes of each id are found once. Undefined where the tokenizer's decoder is anything else.
 */
export function byteLevelDecoder(tokenizer: HfLibTokenizer): ((ids: ArrayLike<number>) => string | undefined) | undefined {
  const lib = tokenizer as unknown as LibDecodeInternals;
  const d = lib.decoder;
  const vocab = lib.model?.vocab;
  if (!d || d.config?.type !== 'ByteLevel' || !d.byte_decoder || !Array.isArray(d.added_tokens) || d.end_of_word_suffix || !Array.isArray(vocab)) return undefined;
  const byteOf = d.byte_decoder;
  const added = new Set(d.added_tokens.map((t) => t.content));
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  /** Per id: its bytes, or the text of an added token; null for an id outside the vocabulary. */
  const pieces: (Uint8Array | string | null | undefined)[] = [];
  const pieceOf = (id: number): Uint8Array | string | null => {
    let piece = pieces[id];
    if (piece !== undefined) return piece;
    const token = Number.isInteger(id) && id >= 0 ? (vocab as unknown[])[id] : undefined;
    if (typeof token !== 'string') piece = null;
    else if (added.has(token)) piece = token;
    else piece = Uint8Array.from(Array.from(token, (c) => byteOf[c] ?? 0));
    if (id >= 0 && id < vocab.length) pieces[id] = piece;
    return piece;
  };
  let buffer = new Uint8Array(256);
  return (ids) => {
    let out = '';
    let n = 0;
    for (let i = 0; i < ids.length; i++) {
      const piece = pieceOf(ids[i]!);
      if (piece === null) return undefined; // the library's unknown-token handling decides
      if (typeof piece === 'string') {
        if (n) { out += text.decode(buffer.subarray(0, n)); n = 0; }
        out += piece;
        continue;
      }
      if (n + piece.length > buffer.length) {
        const grown = new Uint8Array(Math.max(buffer.length * 2, n + piece.length));
        grown.set(buffer.subarray(0, n));
        buffer = grown;
      }
      buffer.set(piece, n);
      n += piece.length;
    }
    if (n) out += text.decode(buffer.subarray(0, n));
    return out;
  };
}

