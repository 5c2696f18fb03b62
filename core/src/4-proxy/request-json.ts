import { settle } from '../util/settled';
import { checkJsonDepth, MAX_JSON_DEPTH } from './json-depth';
import { WireError } from './wire/types';

/**
 * Request bodies parsed without re-reading what a session already sent.
 *
 * A harness re-sends its whole conversation at every call, and the same tool list and system
 * prompt in every session of a run: by the middle of a rollout a body is tens of kilobytes of
 * which a few hundred bytes are new. Parsing, depth-checking and comparing all of it again made
 * a call's cost grow with the conversation. Here a body is read as a top-level object whose
 * members are compared byte for byte (memcmp) with the session's previous body and with the last
 * body any session sent; a member whose bytes are the same is the same value, taken as parsed
 * then. The conversation's array (`messages`, `input`) is compared element by element from its
 * start: the elements a body shares with the previous one are the previous one's values, and
 * only the rest is scanned and parsed. Reused values are settled (frozen, util/settled.ts), so
 * nobody can change what a later request will be given, and what is derived from them (their
 * canonical form) can be remembered by identity.
 *
 * The result is always what `JSON.parse` of the whole text gives (same values, same key order,
 * last of duplicate keys); anything this reader does not expect — a body that is not an object,
 * invalid JSON, nesting over the limit, a `__proto__` key — is read the plain way, which gives
 * the same errors as before.
 */

/** A top-level member's value as read from its bytes. */
interface Member { key: string; start: number; end: number; value: unknown }

/** The conversation array of a body: where it starts, where each element ends (relative to its `[`), and the elements. */
interface History { start: number; ends: number[]; values: unknown[] }

/** What a parse remembers of its body for the next one. */
interface Memo { bytes: Buffer; members: Map<string, Member>; history?: History }

/** Bodies over this size are parsed the plain way and not remembered (a session would hold two copies). */
const MEMO_LIMIT = 8 * 1024 * 1024;

/** Members this long or longer are offered to every session (a run's tool list, its system prompt). */
const SHARED_MIN = 256;

/** The last long value of each top-level key, of whichever session sent it: one per proxy. */
export class SharedMembers {
  readonly byKey = new Map<string, { bytes: Buffer; value: unknown }>();
}

/** Thrown inside the reader for anything it leaves to the plain parse. */
class Unexpected extends Error {}

const isWs = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function skipWs(b: Buffer, i: number): number {
  while (i < b.length && isWs(b[i]!)) i++;
  return i;
}

/** Just past the string whose opening quote is at `i`. */
function stringEnd(b: Buffer, i: number): number {
  let at = i;
  for (;;) {
    at = b.indexOf(34, at + 1);
    if (at < 0) throw new Unexpected();
    let k = at - 1;
    while (k > i && b[k] === 92) k--;
    if ((at - 1 - k) % 2 === 0) return at + 1;
  }
}

/**
 * Just past the JSON value that starts at `i`, found without parsing it (its validity is left to
 * `JSON.parse`); `depth` is the nesting it starts at, checked against `limit`.
 */
function valueEnd(b: Buffer, i: number, depth: number, limit: number): number {
  const c = b[i];
  if (c === 34) return stringEnd(b, i);
  if (c !== 123 && c !== 91) {
    // A number or literal: up to the next delimiter.
    let at = i;
    while (at < b.length) {
      const d = b[at]!;
      if (d === 44 || d === 93 || d === 125 || isWs(d)) break;
      at++;
    }
    if (at === i) throw new Unexpected();
    return at;
  }
  const base = depth;
  for (let at = i; at < b.length; at++) {
    const d = b[at]!;
    if (d === 34) at = stringEnd(b, at) - 1;
    else if (d === 123 || d === 91) { if (++depth > limit) throw new Unexpected(); }
    else if (d === 125 || d === 93) { if (--depth === base) return at + 1; }
  }
  throw new Unexpected();
}

/** Whether `b` holds `same`'s bytes at `at`, followed by something that ends a value. */
function holds(b: Buffer, at: number, same: Buffer, from: number, to: number): boolean {
  const end = at + (to - from);
  if (end > b.length || b.compare(same, from, to, at, end) !== 0) return false;
  if (end === b.length) return false; // a body ends with its closing brace
  const d = b[end]!;
  return d === 44 || d === 93 || d === 125 || isWs(d);
}

const parseText = (b: Buffer, start: number, end: number): unknown => {
  try { return JSON.parse(b.toString('utf8', start, end)); } catch { throw new Unexpected(); }
};

/** One session's reader: remembers the last body it read. */
export class RequestJson {
  private memo?: Memo;

  constructor(private readonly shared: SharedMembers, private readonly limit = MAX_JSON_DEPTH) {}

  /** `JSON.parse` of the body, with the values it shares with earlier bodies taken from them. `history` names the conversation's array. */
  parse(bytes: Buffer, history: string | undefined, where = 'request body'): unknown {
    if (bytes.length <= MEMO_LIMIT) {
      try {
        return this.read(bytes, history);
      } catch (err) {
        if (!(err instanceof Unexpected)) throw err;
      }
    }
    this.memo = undefined;
    return plainParse(bytes, where, this.limit);
  }

  private read(b: Buffer, historyKey: string | undefined): unknown {
    const prev = this.memo;
    this.memo = undefined;
    let i = skipWs(b, 0);
    if (b[i] !== 123) throw new Unexpected();
    const members = new Map<string, Member>();
    const order: Member[] = [];
    let history: History | undefined;
    i = skipWs(b, i + 1);
    if (b[i] !== 125) {
      for (;;) {
        if (b[i] !== 34) throw new Unexpected();
        const keyEnd = stringEnd(b, i);
        const key = parseText(b, i, keyEnd);
        if (typeof key !== 'string' || key === '__proto__') throw new Unexpected();
        i = skipWs(b, keyEnd);
        if (b[i] !== 58) throw new Unexpected();
        const start = skipWs(b, i + 1);
        let member: Member;
        if (key === historyKey && b[start] === 91) {
          const read = this.readHistory(b, start, prev);
          history = read.history;
          member = { key, start, end: read.end, value: [...history.values] };
        } else member = this.readMember(b, key, start, prev);
        members.set(key, member);
        order.push(member);
        i = skipWs(b, member.end);
        if (b[i] === 44) { i = skipWs(b, i + 1); continue; }
        if (b[i] === 125) break;
        throw new Unexpected();
      }
    }
    if (skipWs(b, i + 1) !== b.length) throw new Unexpected();
    const out: Record<string, unknown> = {};
    for (const m of order) out[m.key] = m.value;
    this.memo = { bytes: b, members, history };
    return out;
  }

  /** A top-level member's value: the session's previous one or the shared one when the bytes are the same, else parsed. */
  private readMember(b: Buffer, key: string, start: number, prev: Memo | undefined): Member {
    const before = prev?.members.get(key);
    if (before && holds(b, start, prev!.bytes, before.start, before.end)) return { key, start, end: start + before.end - before.start, value: before.value };
    const shared = this.shared.byKey.get(key);
    if (shared && holds(b, start, shared.bytes, 0, shared.bytes.length)) return { key, start, end: start + shared.bytes.length, value: shared.value };
    const end = valueEnd(b, start, 1, this.limit);
    const value = settle(parseText(b, start, end));
    if (end - start >= SHARED_MIN) this.shared.byKey.set(key, { bytes: Buffer.from(b.subarray(start, end)), value });
    return { key, start, end, value };
  }

  /**
   * The conversation array at `start`: the longest run of leading elements whose bytes (from the
   * `[`) are the previous body's is the previous body's values; the rest is scanned and parsed.
   * Returns the array's elements with their ends (relative to `start`), and the array's end.
   */
  private readHistory(b: Buffer, start: number, prev: Memo | undefined): { history: History; end: number } {
    const old = prev?.history;
    let kept = 0;
    if (old && old.ends.length) {
      // Equal leading bytes through element k imply them through every element before it: binary
      // search, after one comparison of them all (a harness that only appended, the usual case,
      // costs one pass over the history instead of log2(its length) passes).
      let lo = 0;
      let hi = old.ends.length;
      if (holds(b, start, prev!.bytes, old.start, old.start + old.ends[hi - 1]!)) lo = hi;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (holds(b, start, prev!.bytes, old.start, old.start + old.ends[mid - 1]!)) lo = mid;
        else hi = mid - 1;
      }
      kept = lo;
    }
    const history: History = { start, ends: old ? old.ends.slice(0, kept) : [], values: old ? old.values.slice(0, kept) : [] };
    let i = skipWs(b, kept ? start + history.ends[kept - 1]! : start + 1);
    if (b[i] === 93) return { history, end: i + 1 };
    if (kept) {
      if (b[i] !== 44) throw new Unexpected();
      i = skipWs(b, i + 1);
    }
    const first = i;
    let last: number;
    for (;;) {
      last = valueEnd(b, i, 2, this.limit);
      history.ends.push(last - start);
      i = skipWs(b, last);
      if (b[i] === 93) break;
      if (b[i] !== 44) throw new Unexpected();
      i = skipWs(b, i + 1);
    }
    // The new elements with what lies between them, read as one array.
    let fresh: unknown[];
    try { fresh = JSON.parse(`[${b.toString('utf8', first, last)}]`) as unknown[]; } catch { throw new Unexpected(); }
    if (fresh.length !== history.ends.length - history.values.length) throw new Unexpected();
    for (const v of fresh) history.values.push(settle(v));
    return { history, end: i + 1 };
  }
}

/** The plain parse: depth-checked, then `JSON.parse`, with the errors a client is told. */
export function plainParse(bytes: Buffer, where = 'request body', limit = MAX_JSON_DEPTH): unknown {
  const text = bytes.toString('utf8');
  checkJsonDepth(text, where, limit);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new WireError(400, 'invalid_request', `${where} is not valid JSON: ${(err as Error).message}`);
  }
}
