import { ownString } from '@clawgym/core';
/**
 * The first pre-tokenizer split of Qwen2/3 and Llama 3 on ASCII text, as a scanner over char
 * codes, and a table of pieces' ids read without making the piece's string.
 *
 * Why: a harness's text is mostly ASCII, and the split's regex makes a string per piece (a tool
 * result of 336 characters is ~140 pieces) that a `Map` cache then hashes again to look up. With
 * the scanner and the table a known piece costs no allocation: encoding the recorded harness
 * requests (0.9 M characters, 1,174 outside ASCII) runs 1.9× as fast, warm (`docs/templates.md`).
 * The scanner decides only from ASCII characters: where a piece's end depends on a character
 * outside ASCII it answers -1 and the caller matches that one piece with the regex, which stays
 * the reference (property tests compare both).
 */

/** The library's compiled form of the two patterns (`@huggingface/tokenizers` rewrites `(?i:…)` and `\s`). */
const QWEN_SOURCE = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\p{White_Space}\\p{L}\\p{N}]+[\\r\\n]*|\\p{White_Space}*[\\r\\n]+|\\p{White_Space}+(?!\\P{White_Space})|\\p{White_Space}+";
const LLAMA3_SOURCE = QWEN_SOURCE.replace('|\\p{N}|', '|\\p{N}{1,3}|');

/** Classes of the ASCII characters, as the patterns see them. */
const LETTER = 1;
const DIGIT = 2;
const SPACE = 4; // \p{White_Space}: \t \n \v \f \r and ' '
const NEWLINE = 8; // \r \n (also SPACE)
const OTHER = 16; // neither white space, letter nor digit
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  CLASS[c] = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? LETTER
    : c >= 48 && c <= 57 ? DIGIT
      : c === 10 || c === 13 ? SPACE | NEWLINE
        : c === 32 || (c >= 9 && c <= 13) ? SPACE
          : OTHER;
}
/** The class of the character at `k`: 0 past the end, -1 outside ASCII (the scanner cannot decide). */
const classAt = (text: string, k: number): number => {
  if (k >= text.length) return 0;
  const c = text.charCodeAt(k);
  return c < 128 ? CLASS[c]! : -1;
};

/** The end of the run of characters of class `cls` from `j`, or -1 where a character outside ASCII is read. */
function runEnd(text: string, j: number, cls: number): number {
  for (;; j++) {
    const k = classAt(text, j);
    if (k < 0) return -1;
    if (k !== cls) return j;
  }
}

/** Where the piece starting at `from` ends, or -1 where that depends on a character outside ASCII. */
export type AsciiSplit = (text: string, from: number) => number;

/** The scanner for the library's compiled form of a split pattern, when it is one of the two it knows. */
export function asciiSplitFor(pattern: RegExp | undefined): AsciiSplit | undefined {
  if (!pattern || !pattern.global || !pattern.unicode || pattern.ignoreCase || pattern.sticky) return undefined;
  if (pattern.source === QWEN_SOURCE) return (text, from) => pieceEnd(text, from, 1);
  if (pattern.source === LLAMA3_SOURCE) return (text, from) => pieceEnd(text, from, 3);
  return undefined;
}

/**
 * The end of the leftmost match at `from` of the pattern, alternatives in their order:
 * `'s|'t|'re|'ve|'m|'ll|'d` (either case), `[^\r\n\p{L}\p{N}]?\p{L}+`, `\p{N}{1,digits}`,
 * ` ?[^\s\p{L}\p{N}]+[\r\n]*`, `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
 */
function pieceEnd(text: string, i: number, digits: number): number {
  const c = classAt(text, i);
  if (c < 0) return -1;
  const code = text.charCodeAt(i);
  // 's 't 'm 'd 're 've 'll, in either case
  if (code === 39) {
    const d = classAt(text, i + 1);
    if (d < 0) return -1;
    if (d === LETTER) {
      const x = text.charCodeAt(i + 1) | 32;
      if (x === 115 || x === 116 || x === 109 || x === 100) return i + 2;
      const e = classAt(text, i + 2);
      if (e < 0) return -1;
      if (e === LETTER) {
        const y = text.charCodeAt(i + 2) | 32;
        if ((x === 114 && y === 101) || (x === 118 && y === 101) || (x === 108 && y === 108)) return i + 3;
      }
    }
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+
  let j = -1;
  if (c === LETTER) j = i + 1;
  else if (c !== DIGIT && (c & NEWLINE) === 0) {
    const d = classAt(text, i + 1);
    if (d < 0) return -1;
    if (d === LETTER) j = i + 2;
  }
  if (j >= 0) return runEnd(text, j, LETTER);
  // \p{N}{1,digits}
  if (c === DIGIT) {
    j = i + 1;
    for (; j < i + digits; j++) {
      const k = classAt(text, j);
      if (k < 0) return -1;
      if (k !== DIGIT) break;
    }
    return j;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  if (c === OTHER) j = i + 1;
  else if (code === 32) {
    const d = classAt(text, i + 1);
    if (d < 0) return -1;
    if (d === OTHER) j = i + 2;
  }
  if (j >= 0) {
    j = runEnd(text, j, OTHER);
    if (j < 0) return -1;
    while (j < text.length && (text.charCodeAt(j) === 10 || text.charCodeAt(j) === 13)) j++;
    return j;
  }
  // White space (c is SPACE here): the run from i, then which of the last three alternatives.
  let e = i;
  let lastNewline = -1;
  for (;; e++) {
    const k = classAt(text, e);
    if (k < 0) return -1;
    if ((k & SPACE) === 0) break;
    if (k & NEWLINE) lastNewline = e;
  }
  if (lastNewline >= 0) return lastNewline + 1; // \s*[\r\n]+: up to the run's last newline
  if (e === text.length || e - 1 === i) return e; // \s+(?!\S) at the end, or \s+ of one character
  return e - 1; // \s+(?!\S): the run but its last character, which goes with what follows
}

/** Pieces longer than this are not remembered (the piece cache's rule). */
export const MAX_PIECE = 64;
/** Entries kept before the table starts over. */
const MAX_ENTRIES = 200_000;

/** FNV-1a over the UTF-16 code units of `text[a, b)`: the table's hash. */
export function pieceHash(text: string, a: number, b: number): number {
  let h = 0x811c9dc5;
  for (let k = a; k < b; k++) h = Math.imul(h ^ text.charCodeAt(k), 16777619);
  return h;
}

/**
 * Piece text → its ids, looked up by a range of a string (no substring made): open addressing
 * over FNV-1a hashes of the UTF-16 code units, the key compared code by code.
 */
export class PieceTable {
  private keys: (string | undefined)[] = [];
  private hashes = new Int32Array(0);
  private values: (readonly number[] | undefined)[] = [];
  private mask = 0;
  size = 0;

  constructor() { this.reset(); }

  /** Empty slots for `capacity` pieces (a power of two). */
  private allocate(capacity: number): void {
    this.keys = new Array<string | undefined>(capacity);
    this.hashes = new Int32Array(capacity);
    this.values = new Array<readonly number[] | undefined>(capacity);
    this.mask = capacity - 1;
  }

  private reset(): void {
    this.allocate(1 << 12);
    this.size = 0;
  }

  /** The slot holding `text[a, b)`, or the empty slot where it would go. */
  private slot(text: string, a: number, b: number, h: number): number {
    const n = b - a;
    for (let s = h & this.mask; ; s = (s + 1) & this.mask) {
      const key = this.keys[s];
      if (key === undefined) return s;
      if (this.hashes[s] !== h || key.length !== n) continue;
      let k = 0;
      while (k < n && key.charCodeAt(k) === text.charCodeAt(a + k)) k++;
      if (k === n) return s;
    }
  }

  /** The ids of the piece `text[a, b)`, if remembered. */
  get(text: string, a: number, b: number): readonly number[] | undefined {
    if (b - a > MAX_PIECE) return undefined;
    return this.values[this.slot(text, a, b, pieceHash(text, a, b))];
  }

  /** Remember a piece's ids (pieces over {@link MAX_PIECE} characters are not kept). */
  set(piece: string, ids: readonly number[]): void {
    if (piece.length > MAX_PIECE) return;
    if (this.size >= MAX_ENTRIES) this.reset();
    else if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const h = pieceHash(piece, 0, piece.length);
    const s = this.slot(piece, 0, piece.length, h);
    if (this.keys[s] === undefined) this.size++;
    this.keys[s] = ownString(piece);
    this.hashes[s] = h;
    this.values[s] = ids;
  }

  private grow(): void {
    const { keys, hashes, values } = this;
    this.allocate(keys.length * 2);
    for (let s = 0; s < keys.length; s++) {
      const key = keys[s];
      if (key === undefined) continue;
      let t = hashes[s]! & this.mask;
      while (this.keys[t] !== undefined) t = (t + 1) & this.mask;
      this.keys[t] = key;
      this.hashes[t] = hashes[s]!;
      this.values[t] = values[s];
    }
  }
}
