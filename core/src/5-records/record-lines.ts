import { createReadStream } from 'node:fs';

/**
 * The lines of a file as buffers, read in chunks: never the whole file in memory, and never a
 * string of it (a file over ~512 MiB is past V8's longest string, and past 2 GiB past what
 * `readFile` reads). A line is one buffer, however many chunks it spans; the newline is dropped.
 */
export async function* fileLines(path: string): AsyncGenerator<Buffer> {
  let pieces: Buffer[] = [];
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let at = 0;
    for (let nl = chunk.indexOf(10, at); nl >= 0; nl = chunk.indexOf(10, at)) {
      const part = chunk.subarray(at, nl);
      yield pieces.length ? Buffer.concat([...pieces, part]) : part;
      pieces = [];
      at = nl + 1;
    }
    if (at < chunk.length) pieces.push(chunk.subarray(at));
  }
  if (pieces.length) yield Buffer.concat(pieces);
}

/**
 * The ids of a JSON array of integers held in `b` between `start` (its `[`) and `end` (just past
 * its `]`), parsed from the bytes: a prompt of millions of ids becomes one Int32Array, never a
 * number[] (8 bytes an id, and a string of the line's text first). Throws on anything else.
 */
export function jsonIdsOf(b: Buffer, start: number, end: number): Int32Array {
  if (b[start] !== 91 || b[end - 1] !== 93) throw new SyntaxError('not an array of ids');
  let n = 0;
  let any = false;
  for (let i = start + 1; i < end - 1; i++) { if (b[i] === 44) n++; else any = true; }
  const out = new Int32Array(any ? n + 1 : 0);
  let k = 0;
  let v = 0;
  let neg = false;
  let digits = 0;
  for (let i = start + 1; i < end; i++) {
    const c = b[i]!;
    if (c >= 48 && c <= 57) { v = v * 10 + (c - 48); digits++; }
    else if (c === 45 && digits === 0) neg = true;
    else if (c === 44 || c === 93) {
      if (!any && c === 93) break;
      if (digits === 0) throw new SyntaxError('not an array of ids');
      out[k++] = neg ? -v : v;
      v = 0; neg = false; digits = 0;
    } else if (c !== 32) throw new SyntaxError('not an array of ids');
  }
  return out;
}

/** How many ids a JSON array of integers holds, without reading them: its commas, plus one unless it is empty. */
export function jsonIdsCount(b: Buffer, start: number, end: number): number {
  // One tight loop over plain bytes (a first pass over a 2 GiB file of these is most of its time).
  const bytes = new Uint8Array(b.buffer, b.byteOffset + start + 1, Math.max(0, end - start - 2));
  let n = 0;
  for (let i = 0; i < bytes.length; i++) n += bytes[i] === 44 ? 1 : 0;
  let first = 0;
  while (first < bytes.length && bytes[first] === 32) first++;
  return first < bytes.length ? n + 1 : 0;
}
