import type { TokenIds, Tokenizer } from '../../contracts/engine';

/** Special tokens of the byte-level vocabulary, after the 256 byte ids. */
export const SPECIAL_TOKENS = [
  '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>',
  '<think>', '</think>', '<tool_response>', '</tool_response>', '<|sep|>',
] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/**
 * Byte-level tokenizer: ids 0–255 are bytes, then one id per special token. Plain text never
 * encodes to a special id (a harness cannot inject `<|im_end|>` through a tool result);
 * templates insert specials by id. Used by the embedded engine and the scripted engine.
 */
export class ByteTokenizer implements Tokenizer {
  readonly vocabSize = 256 + SPECIAL_TOKENS.length;
  private readonly encoder = new TextEncoder();

  /** The id of a special token. */
  special(token: SpecialToken): number {
    return 256 + SPECIAL_TOKENS.indexOf(token);
  }

  isSpecial(id: number): boolean {
    return id >= 256 && id < this.vocabSize;
  }

  encode(text: string): TokenIds {
    const out = new Int32Array(this.encodedLength(text));
    this.encodeInto(text, out, 0);
    return out;
  }

  /** One id a UTF-8 byte. */
  encodedLength(text: string): number {
    return Buffer.byteLength(text, 'utf8');
  }

  /**
   * `text`'s ids written into `out` from `at`, through a small scratch buffer of bytes: no
   * byte array as long as the text (a 30 MB tool result would make one of 30 MB, then widen it).
   */
  encodeInto(text: string, out: Int32Array, at: number): number {
    const start = at;
    const scratch = this.scratch;
    for (let read = 0; read < text.length;) {
      // A slice of a flat string is a view, not a copy.
      const r = this.encoder.encodeInto(read === 0 ? text : text.slice(read), scratch);
      out.set(scratch.subarray(0, r.written), at);
      at += r.written;
      read += r.read;
    }
    return at - start;
  }

  /** Where {@link encodeInto} puts each run of bytes before widening it to ids. */
  private readonly scratch = new Uint8Array(64 * 1024);

  decode(ids: ArrayLike<number>): string {
    const decoder = new TextDecoder('utf-8');
    // Runs of byte ids are copied into one typed buffer and decoded in place, not collected as numbers.
    const bytes = new Uint8Array(ids.length);
    let out = '';
    let n = 0;
    const flush = () => {
      if (n) out += decoder.decode(bytes.subarray(0, n));
      n = 0;
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id < 256) bytes[n++] = id;
      else { flush(); out += SPECIAL_TOKENS[id - 256] ?? ''; }
    }
    flush();
    return out;
  }

  /** A decoder for streamed ids: returns complete characters only, keeping split UTF-8 sequences. */
  streamDecoder(): { push(id: number): string; end(): string } {
    const decoder = new TextDecoder('utf-8');
    return {
      push: (id) => (id < 256 ? decoder.decode(Uint8Array.of(id), { stream: true }) : decoder.decode() + (SPECIAL_TOKENS[id - 256] ?? '')),
      end: () => decoder.decode(),
    };
  }
}
