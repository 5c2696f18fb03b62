/**
 * The compact encoding of ids and log-probabilities in call records (format 2, see
 * docs/records.md): ids as zigzag LEB128 varints, log-probabilities as little-endian float64,
 * both base64. A token id under 2^21 (every vocabulary in use) takes 3 bytes, 4 characters,
 * against 6-7 as a JSON number; a byte-level id takes 1-2 bytes. Written in pieces, so a prompt
 * of tens of millions of ids is never one buffer or one string.
 */

/**
 * Ids a piece holds (the bytes of one piece: at most 5 an id). Small enough that a piece's text
 * and the bytes written from it are young objects, collected within the write, not large objects
 * left for a full collection (pieces of 2^18 ids left twice a byte-level prompt's ids behind).
 */
const IDS_PER_PIECE = 1 << 14;

/** `ids` as varint bytes into `out`; returns how many were written. */
function varints(ids: ArrayLike<number>, from: number, to: number, out: Buffer, at: number): number {
  for (let i = from; i < to; i++) {
    const v = ids[i]!;
    let z = ((v << 1) ^ (v >> 31)) >>> 0;
    while (z >= 0x80) { out[at++] = (z & 0x7f) | 0x80; z >>>= 7; }
    out[at++] = z;
  }
  return at;
}

/**
 * The base64 of `ids`' varints, in pieces (strings) to write one after another. A piece's bytes
 * are cut at a multiple of 3 (the rest carried to the next), so the pieces join into one base64
 * text with padding only at its end.
 */
export function* idsBase64(ids: ArrayLike<number>): Generator<string> {
  const room = Buffer.allocUnsafe(Math.min(ids.length, IDS_PER_PIECE) * 5 + 2);
  let carried = 0;
  for (let i = 0; i < ids.length; i += IDS_PER_PIECE) {
    const end = varints(ids, i, Math.min(ids.length, i + IDS_PER_PIECE), room, carried);
    const whole = end - (end % 3);
    if (whole) yield room.toString('base64', 0, whole);
    room.copy(room, 0, whole, end);
    carried = end - whole;
  }
  if (carried) yield room.toString('base64', 0, carried);
}

/** All of {@link idsBase64} as one string (small lists). */
export const idsText = (ids: ArrayLike<number>): string => [...idsBase64(ids)].join('');

/** The ids of an {@link idsBase64} text. */
export function idsOf(text: string): Int32Array {
  const bytes = Buffer.from(text, 'base64');
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x80) n++;
  const out = new Int32Array(n);
  let k = 0;
  let z = 0;
  let shift = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    z |= (b & 0x7f) << shift;
    if (b < 0x80) { out[k++] = (z >>> 1) ^ -(z & 1); z = 0; shift = 0; } else shift += 7;
  }
  return out;
}

/** Log-probabilities as base64 of little-endian float64 (exact: the values read back are the ones written). */
export function floatsText(values: readonly number[]): string {
  const b = Buffer.allocUnsafe(values.length * 8);
  for (let i = 0; i < values.length; i++) b.writeDoubleLE(values[i]!, i * 8);
  return b.toString('base64');
}

export function floatsOf(text: string): number[] {
  const b = Buffer.from(text, 'base64');
  const out = new Array<number>(b.length >> 3);
  for (let i = 0; i < out.length; i++) out[i] = b.readDoubleLE(i * 8);
  return out;
}
