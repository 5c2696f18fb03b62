import { randomFillSync } from 'node:crypto';

/** Random bytes drawn from the system a page at a time (what `crypto.randomUUID` does too), kept as hex. */
const pool = Buffer.alloc(4096);
let hex = '';
let used = pool.length;

/**
 * `bytes` random bytes as hex, for ids that must be unique, not secret (a response's id, a
 * tool call's): one `randomFillSync` and one hex conversion per 4 KiB, an id a slice of that —
 * a fresh `randomBytes` was ~50 µs of each proxied call (two ids), and a `toString('hex')` per id
 * ~30 µs after the 20 ms idle between calls (a slice ~15).
 */
export function randomHex(bytes: number): string {
  if (bytes > pool.length) throw new RangeError(`randomHex: at most ${pool.length} bytes`);
  if (used + bytes > pool.length) { randomFillSync(pool); hex = pool.toString('hex'); used = 0; }
  const id = hex.slice(used * 2, (used + bytes) * 2);
  used += bytes;
  return id;
}
