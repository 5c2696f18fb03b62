import type { TokenIds } from '../contracts/engine';

/**
 * A growable Int32Array that the calls of one conversation chain share. A call that extends
 * the chain's tip appends its new ids in place (amortised O(new tokens)) and gets a zero-copy
 * view; views never change, because the buffer is only ever appended to. Branching off
 * anywhere but the tip copies the prefix into a new buffer.
 */
export class IdBuffer {
  private data: Int32Array;
  length = 0;

  constructor(capacity = 1024) {
    this.data = new Int32Array(capacity);
  }

  static of(...parts: ArrayLike<number>[]): IdBuffer {
    const n = parts.reduce((sum, p) => sum + p.length, 0);
    // Room for the conversation to grow by half again before regrowing, not twice its size (a 30 MB prompt).
    const b = new IdBuffer(Math.max(1024, n + Math.ceil(n / 2)));
    for (const p of parts) b.append(p);
    return b;
  }

  /**
   * A buffer over `ids` itself, without copying (a freshly rendered prompt: for a 30 MB tool
   * result a copy would be 120 MB more). Full from the start, so the first append moves it into a
   * grown buffer and `ids` itself is never written (it may be a tokenizer's cached segment).
   */
  static adopt(ids: Int32Array): IdBuffer {
    const b = new IdBuffer(0);
    b.data = ids;
    b.length = ids.length;
    return b;
  }

  /**
   * A freshly rendered prompt: a small one gets room to grow in place (the next call of the
   * conversation appends without copying); a huge one (over 2^20 ids) is adopted as it is.
   */
  static forRender(ids: Int32Array): IdBuffer {
    return ids.length > 1 << 20 ? IdBuffer.adopt(ids) : IdBuffer.of(ids);
  }

  append(ids: ArrayLike<number>): void {
    if (this.length + ids.length > this.data.length) {
      const grown = new Int32Array(Math.max(this.data.length * 2, this.length + ids.length, 1024));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    this.data.set(ids, this.length);
    this.length += ids.length;
  }

  /** The first `length` ids, without copying. */
  view(length = this.length): TokenIds {
    return this.data.subarray(0, length);
  }
}
