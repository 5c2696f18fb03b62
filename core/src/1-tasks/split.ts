import type { Split } from '../contracts/task';
import { Rng } from '../util/rng';

/** How an on-disk task set (a benchmark folder, a CSV) is split into train and test. */
export interface SplitOptions {
  /** Ids of the test tasks; every other task is train. Takes precedence over `testFraction`. */
  testIds?: string[];
  /** Share of tasks in test, chosen by hashing the task id (stable across runs). Default 0.2. */
  testFraction?: number;
  /**
   * Salt of that hash: another seed draws another test set of the same size (for repeated
   * held-out evaluations). Default: none, the id alone is hashed (the split of earlier runs).
   */
  splitSeed?: number;
}

/**
 * FNV-1a of a string with murmur3's final mix, in [0, 1). The mix matters: plain FNV-1a of ids
 * that differ only in their last characters (`task-0` … `task-199`) clusters, and put none of
 * those 200 in a 30% test split.
 */
export function hashUnit(s: string): number {
  let h = 0x811c9dc5;
  for (const ch of Buffer.from(s, 'utf8')) h = Math.imul(h ^ ch, 0x01000193) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** The split a task id falls in. */
export function splitOf(id: string, options: SplitOptions = {}): Split {
  if (options.testIds) return options.testIds.includes(id) ? 'test' : 'train';
  const key = options.splitSeed === undefined ? id : `${options.splitSeed}:${id}`;
  return hashUnit(key) < (options.testFraction ?? 0.2) ? 'test' : 'train';
}

/** The tasks of one split, shuffled by `seed`, at most `limit` of them. */
export function pickSplit<T extends { id: string }>(tasks: T[], split: Split, opts: { seed: number; limit?: number }, options: SplitOptions = {}): T[] {
  const chosen = tasks.filter((t) => splitOf(t.id, options) === split);
  const rng = new Rng(opts.seed);
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
  }
  return opts.limit === undefined ? chosen : chosen.slice(0, opts.limit);
}
