import type { TokenIds } from '../contracts/engine';

/**
 * A tokenizer that knows how many ids a text encodes to before encoding it, can write them
 * straight into an array, and whose ids of a concatenation are the concatenation of the parts'
 * ids (the byte-level one: one id a UTF-8 byte). Text given to
 * {@link IdChunks.addText} with one is encoded only when the ids are joined, into the joined
 * array itself: a 30 MB tool result costs its ids once, not its ids plus a copy.
 */
export interface DirectEncoder {
  encodedLength(text: string): number;
  /** Writes `text`'s ids into `out` from `at`; returns how many it wrote. */
  encodeInto(text: string, out: Int32Array, at: number): number;
}

/** A text to encode when the ids are joined, and the number of ids it will take. */
interface Deferred { text: string; length: number; encoder: DirectEncoder }

const isDirect = (t: unknown): t is DirectEncoder =>
  typeof (t as DirectEncoder).encodeInto === 'function' && typeof (t as DirectEncoder).encodedLength === 'function';

/** Ids up to this many are copied into the current block rather than kept as a chunk of their own. */
const SMALL = 64;
/** Ids a block of small adds holds. */
const BLOCK = 1 << 14;

/**
 * Collects token ids as the chunks a tokenizer returns and joins them once, into an array of
 * the exact size. Pushing a large tool result's ids one by one into a growing array costs the
 * array's regrowth copies (about three times the ids at peak); this costs the ids twice, or once
 * for text from a {@link DirectEncoder}. Small adds (a special token, a word's ids) are copied
 * into blocks as they come: a text of one long line is millions of words, and a chunk for each
 * kept an array of millions of references (ten times the text, at peak) until the join.
 */
export class IdChunks {
  private readonly chunks: (ArrayLike<number> | Deferred)[] = [];
  /** Where small adds go; `[start, used)` of it is not a chunk yet. */
  private block?: Int32Array;
  private start = 0;
  private used = 0;
  private length = 0;

  /** One id (a special token). */
  push(id: number): void {
    if (!this.block || this.used === this.block.length) this.newBlock(1);
    this.block![this.used++] = id;
    this.length++;
  }

  /** Ids from the tokenizer: a large chunk kept without copying, a small one copied into the current block. */
  add(ids: ArrayLike<number>): void {
    if (ids.length <= SMALL) {
      if (!this.block || this.used + ids.length > this.block.length) this.newBlock(ids.length);
      const block = this.block!;
      for (let i = 0; i < ids.length; i++) block[this.used + i] = ids[i]!;
      this.used += ids.length;
      this.length += ids.length;
      return;
    }
    this.flushBlock();
    this.chunks.push(ids);
    this.length += ids.length;
  }

  /** `text` encoded by `tokenizer`: at once, or when joined where the tokenizer can write into the joined array. */
  addText(text: string, tokenizer: { encode(text: string): TokenIds }): void {
    if (!isDirect(tokenizer)) { this.add(tokenizer.encode(text)); return; }
    this.flushBlock();
    const length = tokenizer.encodedLength(text);
    this.chunks.push({ text, length, encoder: tokenizer });
    this.length += length;
  }

  /**
   * The ids of `parts` joined into one text. A {@link DirectEncoder} encodes each part on its own
   * (the same ids), so the joined text is never made: `<tool_response>\n${a 30 MB result}…`
   * would be one more copy of the result.
   */
  addJoined(parts: readonly string[], tokenizer: { encode(text: string): TokenIds }): void {
    if (!isDirect(tokenizer)) { this.add(tokenizer.encode(parts.join(''))); return; }
    for (const p of parts) this.addText(p, tokenizer);
  }

  /** Another list's ids after these, its chunks moved here without copying (`other` is left empty). */
  take(other: IdChunks): void {
    other.flushBlock();
    if (!other.chunks.length) return;
    this.flushBlock();
    for (const c of other.chunks) this.chunks.push(c);
    this.length += other.length;
    other.chunks.length = 0;
    other.length = 0;
  }

  /** The ids in order, in one allocation of the final size (a lone chunk that is a whole typed array is returned as is). */
  toIds(): TokenIds {
    this.flushBlock();
    const only = this.chunks.length === 1 ? this.chunks[0] : undefined;
    if (only instanceof Int32Array && only.byteLength === only.buffer.byteLength) return only;
    const out = new Int32Array(this.length);
    let at = 0;
    for (let k = 0; k < this.chunks.length; k++) {
      const c = this.chunks[k]!;
      // Dropped once copied: a chunk is garbage as soon as its ids are in.
      this.chunks[k] = [];
      if ('encoder' in c) { at += c.encoder.encodeInto(c.text, out, at); continue; }
      if (c instanceof Int32Array) out.set(c, at);
      else for (let i = 0; i < c.length; i++) out[at + i] = c[i]!;
      at += c.length;
    }
    return out;
  }

  /** A new block with room for at least `n` ids, each twice the last up to {@link BLOCK} (most renders are small). */
  private newBlock(n: number): void {
    this.flushBlock();
    const size = Math.min(BLOCK, Math.max(256, (this.block?.length ?? 0) * 2));
    this.block = new Int32Array(Math.max(size, n));
    this.start = this.used = 0;
  }

  /** The block's ids not yet in a chunk become one; the block's room stays in use. */
  private flushBlock(): void {
    if (this.block && this.used > this.start) this.chunks.push(this.block.subarray(this.start, this.used));
    this.start = this.used;
  }
}
