import { randomFillSync } from 'node:crypto';

/** Random bytes drawn from the system a page at a time (what `crypto.randomUUID` does too). */
const pool = Buffer.alloc(4096);
let used = pool.length;

/**
 * `bytes` random bytes as hex, for ids that must be unique, not secret (a response's id, a
 * tool call's): one `randomFillSync` per 4 KiB instead of one per id — a fresh `randomBytes`
 * was ~50 µs of each proxied call (two ids).
 */
export function randomHex(bytes: number): string {
  if (bytes > pool.length) throw new RangeError(`randomHex: at most ${pool.length} bytes`);
  if (used + bytes > pool.length) { randomFillSync(pool); used = 0; }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}
