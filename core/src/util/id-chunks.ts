import type { TokenIds } from '../contracts/engine';

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

  /** The ids in order, in one allocation of the final size (a lone chunk that is already typed is returned as is). */
  toIds(): TokenIds {
    if (this.single.length) { this.chunks.push(this.single); this.single = []; }
    const only = this.chunks.length === 1 ? this.chunks[0] : undefined;
    if (only instanceof Int32Array) return only;
    const out = new Int32Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      if (c instanceof Int32Array) out.set(c, at);
      else for (let i = 0; i < c.length; i++) out[at + i] = c[i]!;
      at += c.length;
    }
    return out;
  }
}
