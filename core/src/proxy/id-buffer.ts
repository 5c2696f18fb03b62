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

  append(ids: ArrayLike<number>): void {
    if (this.length + ids.length > this.data.length) {
      const grown = new Int32Array(Math.max(this.data.length * 2, this.length + ids.length));
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
