import { ByteTokenizer } from '../4-proxy/engine/byte-tokenizer';
import { IdChunks } from './id-chunks';
import { ownString } from './own-string';

/** A tokenizer that can only encode (no direct writing): one id a UTF-16 unit. */
const plain = { encode: (t: string) => Int32Array.from(t, (c) => c.charCodeAt(0)) };

/** A deterministic pseudo-random sequence (the same cases at every run). */
function rng(seed: number) {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

describe('IdChunks', () => {
  it('joins single ids, small and large chunks, deferred texts and moved lists in order, whatever the mix', () => {
    const bytes = new ByteTokenizer();
    const rand = rng(7);
    for (let round = 0; round < 12; round++) {
      const ids = new IdChunks();
      const expected: number[] = [];
      for (let op = 0; op < 120; op++) {
        const r = rand();
        if (r < 0.3) { const id = Math.floor(rand() * 300); ids.push(id); expected.push(id); }
        else if (r < 0.6) {
          // Small (copied into blocks) or large (kept as a chunk), typed or a plain array.
          const n = rand() < 0.8 ? Math.floor(rand() * 65) : 65 + Math.floor(rand() * 3000);
          const chunk = Array.from({ length: n }, () => Math.floor(rand() * 1e5));
          ids.add(rand() < 0.5 ? chunk : Int32Array.from(chunk));
          expected.push(...chunk);
        } else if (r < 0.8) {
          const text = `é${'x'.repeat(Math.floor(rand() * 100))}😀`;
          const useBytes = rand() < 0.5;
          ids.addText(text, useBytes ? bytes : plain);
          // What the tokenizer used gives for the text on its own.
          expected.push(...(useBytes ? bytes.encode(text) : plain.encode(text)));
        } else if (r < 0.9) {
          const other = new IdChunks();
          const n = Math.floor(rand() * 3000);
          for (let i = 0; i < n; i++) { const id = i % 251; other.push(id); expected.push(id); }
          ids.take(other);
          expect(other.toIds()).toHaveLength(0);
        } else {
          const parts = ['<tool_response>\n', 'ü'.repeat(Math.floor(rand() * 50)), '\n</tool_response>'];
          ids.addJoined(parts, bytes);
          expected.push(...bytes.encode(parts.join('')));
        }
      }
      // Compared as one buffer: jest's deep equality is slow on arrays of many thousand numbers.
      expect(Buffer.from(ids.toIds().buffer).equals(Buffer.from(Int32Array.from(expected).buffer))).toBe(true);
    }
  });

  it('gives back a lone typed chunk as it is, and never a view of a larger array', () => {
    const whole = Int32Array.of(1, 2, 3, ...new Array(100).fill(4));
    const one = new IdChunks();
    one.add(whole);
    expect(one.toIds()).toBe(whole);
    const small = new IdChunks();
    small.push(5);
    small.add([6, 7]);
    const out = small.toIds();
    expect(Array.from(out)).toEqual([5, 6, 7]);
    expect(out.byteLength).toBe(out.buffer.byteLength);
  });
});

describe('ByteTokenizer.encodeInto', () => {
  it('writes the UTF-8 bytes of texts longer than its scratch buffer, characters split across its edge included', () => {
    const t = new ByteTokenizer();
    const encoder = new TextEncoder();
    // Multi-byte characters, surrogate pairs and a lone surrogate (U+FFFD, 3 bytes) around each 64 KiB edge.
    const texts = [
      'a'.repeat(65_535) + '€' + 'b'.repeat(70_000),
      'é'.repeat(40_000) + '😀'.repeat(20_000),
      'x'.repeat(65_535) + '😀' + '\ud800' + 'y'.repeat(10),
      '',
    ];
    for (const text of texts) {
      const want = encoder.encode(text);
      expect(t.encodedLength(text)).toBe(want.length);
      const out = new Int32Array(want.length + 3).fill(-1);
      expect(t.encodeInto(text, out, 2)).toBe(want.length);
      expect(out[0]).toBe(-1);
      expect(out[want.length + 2]).toBe(-1);
      expect(Buffer.from(Uint8Array.from(out.subarray(2, 2 + want.length))).equals(Buffer.from(want))).toBe(true);
      expect(Array.from(t.encode(text))).toEqual(Array.from(want));
    }
  });
});

describe('ownString', () => {
  it('is the same text', () => {
    const long = `${'abc'.repeat(1000)}def`;
    for (const s of ['', 'short', long.slice(5, 40), long.slice(1)]) expect(ownString(s)).toBe(s);
  });
});
