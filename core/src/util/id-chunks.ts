/**
 * Collects token ids as the chunks a tokenizer returns and joins them once, into an array of
 * the exact size. Pushing a large tool result's ids one by one into a growing array costs the
 * array's regrowth copies (about three times the ids at peak); this costs the ids twice.
 */
export class IdChunks {
  private readonly chunks: ArrayLike<number>[] = [];
  private single: number[] = [];
  private length = 0;

  /** One id (a special token). */
  push(id: number): void {
    this.single.push(id);
    this.length++;
  }

  /** Ids from the tokenizer, kept without copying. */
  add(ids: ArrayLike<number>): void {
    if (this.single.length) { this.chunks.push(this.single); this.single = []; }
    this.chunks.push(ids);
    this.length += ids.length;
  }

  toArray(): number[] {
    if (this.single.length) { this.chunks.push(this.single); this.single = []; }
    // new Array(n) filled in order is one allocation; Array.from or push would grow it repeatedly.
    const out = new Array<number>(this.length);
    let at = 0;
    for (const c of this.chunks) for (let i = 0; i < c.length; i++) out[at++] = c[i]!;
    return out;
  }
}
