import 'reflect-metadata';
import { writeSync } from 'node:fs';
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { ModelCallRecord, RecordStore } from '../contracts/records';
import { ClawGymError, ErrorCodes } from '../errors';
import { ServiceTokens } from './tokens';

/**
 * On disk a record that reuses its parent's ids stores only the new tail of its prompt
 * (`promptTail`), and a retry stores none: disk and serialisation cost grow with new tokens,
 * not with history (a 50-call rollout at 30k tokens would otherwise write 1.5M ids).
 */
type StoredRecord = Omit<ModelCallRecord, "promptIds"> & { promptIds?: number[]; promptTail?: number[] };

/** Ids a piece of a line holds: a 30M-id prompt is written as 120 pieces of at most 3 MB. */
const IDS_PER_PIECE = 1 << 18;

/**
 * `ids` as comma-separated decimal ASCII into `out` (12 bytes an id of room), a leading comma
 * unless first: digits written by hand, because `join` makes a string per id (a 30M-id prompt
 * allocated ~1 GB).
 */
function idsAscii(ids: Int32Array, first: boolean, out: Buffer): Buffer {
  let at = 0;
  for (let i = 0; i < ids.length; i++) {
    if (i > 0 || !first) out[at++] = 44; // ','
    let v = ids[i]!;
    if (v < 0) { out[at++] = 45; v = -v; } // '-'
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    at += digits;
    for (let k = at - 1; k >= at - digits; k--) { out[k] = 48 + (v % 10); v = (v / 10) | 0; }
  }
  return out.subarray(0, at);
}

/** Lines up to this many bytes are appended synchronously (see {@link CallStore.append}). */
const SYNC_LINE = 64 * 1024;

/** A record as stored: the line's head (the record without its prompt), and the prompt ids it keeps. */
interface StoredParts { head: string; field?: 'promptTail' | 'promptIds'; ids: Int32Array }

function storedParts(r: ModelCallRecord): StoredParts {
  const { promptIds, ...rest } = r;
  const head = JSON.stringify(rest);
  if (r.origin.kind === 'retry') return { head, ids: promptIds.subarray(0, 0) };
  return r.origin.kind === 'reuse' ? { head, field: 'promptTail', ids: promptIds.subarray(r.origin.reusedTokens) } : { head, field: 'promptIds', ids: promptIds };
}

/**
 * The stored line of a record, newline included, in pieces to write one after another: the
 * record without its prompt, then the prompt's ids a piece at a time — no number[] copy, no
 * string the size of the whole prompt.
 */
function* lineOf({ head, field, ids }: StoredParts): Generator<string | Buffer> {
  if (!field) { yield `${head}\n`; return; }
  yield `${head.slice(0, -1)},"${field}":[`;
  // One buffer for every piece: the caller writes each piece before asking for the next.
  const room = Buffer.allocUnsafe(Math.min(ids.length, IDS_PER_PIECE) * 12);
  for (let i = 0; i < ids.length; i += IDS_PER_PIECE) yield idsAscii(ids.subarray(i, i + IDS_PER_PIECE), i === 0, room);
  yield ']}\n';
}

/** Where every small line is made (see {@link SYNC_LINE}): written and done before the next one starts. */
const scratch = Buffer.allocUnsafe(SYNC_LINE);

/**
 * A small record's line, what {@link lineOf}'s pieces make, written into {@link scratch}: its
 * length, or undefined when it may not fit (it is then written in pieces). No string of the
 * line, no `join` of its ids, no buffer per call. After 20 ms of idle, as a proxied call's
 * record is made, the `join` and the `Buffer.from` cost ~65 µs; with this a cold append of a
 * bench-shaped record went from ~179 to ~160 µs (most of the rest is the head's JSON and the write).
 */
function smallLine({ head, field, ids }: StoredParts): number | undefined {
  const tail = field ? ids.length * 12 + field.length + 8 : 1;
  if (head.length + tail > SYNC_LINE) return undefined; // each UTF-16 unit is at least a byte
  // `write` stops short only when the room left is less than the next character (at most 4
  // bytes): a head that leaves more than that free was written whole.
  let at = scratch.write(head, 0, 'utf8');
  if (at > SYNC_LINE - 4 - tail) return undefined;
  if (!field) { scratch[at++] = 10; return at; }
  at += scratch.write(`,"${field}":[`, at - 1, 'latin1') - 1; // over the head's closing brace
  at += idsAscii(ids, true, scratch.subarray(at)).length;
  scratch[at++] = 93; // ']'
  scratch[at++] = 125; // '}'
  scratch[at++] = 10;
  return at;
}

/** Rebuild full prompt ids from parents; a record whose parent is missing is reported, not guessed. */
function decode(stored: StoredRecord[], file: string): ModelCallRecord[] {
  const byIndex = new Map<number, ModelCallRecord>();
  return stored.map((s) => {
    let promptIds: Int32Array;
    if (s.promptIds) promptIds = Int32Array.from(s.promptIds);
    else {
      const parentIndex = s.origin.kind === 'reuse' ? s.origin.parentCall : s.origin.kind === 'retry' ? s.origin.of : -1;
      const parent = byIndex.get(parentIndex);
      if (!parent) throw new ClawGymError(ErrorCodes.RECORDS_INVALID, `${file}: call ${s.callIndex} refers to call ${parentIndex}, which is not in the file`, { hint: 'The file was edited or cut before that call; the rollout\'s records cannot be rebuilt. Remove the file (its rollout is then missing records: an infrastructure failure).' });
      if (s.origin.kind === 'reuse') {
        const tail = s.promptTail ?? [];
        promptIds = new Int32Array(parent.promptIds.length + parent.outputIds.length + tail.length);
        promptIds.set(parent.promptIds);
        promptIds.set(parent.outputIds, parent.promptIds.length);
        promptIds.set(tail, parent.promptIds.length + parent.outputIds.length);
      } else promptIds = parent.promptIds;
    }
    const { promptTail: _tail, ...rest } = s;
    const record = { ...rest, promptIds } as ModelCallRecord;
    byIndex.set(record.callIndex, record);
    return record;
  });
}

/**
 * The run store's call records: one JSONL file per rollout under `<dir>/`, appended in call
 * order. `append` resolves once the line is written to the file (the proxy awaits it before
 * sending a response's final event), so a crash of this process never loses an answered call.
 */
@injectable()
export class CallStore implements RecordStore {
  private readonly files = new Map<string, { handle: Promise<FileHandle>; tail: Promise<void>; open?: FileHandle; pending: number }>();

  /** In the run container the folder is the scope's `Tokens.CallsDir`. */
  constructor(@inject(ServiceTokens.CallsDir) readonly dir: string) {}

  private fileOf(rolloutId: string) {
    let f = this.files.get(rolloutId);
    if (!f) {
      const handle = mkdir(this.dir, { recursive: true }).then(() => open(this.path(rolloutId), 'a'));
      const file: { handle: Promise<FileHandle>; tail: Promise<void>; open?: FileHandle; pending: number } = { handle, tail: Promise.resolve(), pending: 1 };
      file.tail = handle.then((h) => { file.open = h; file.pending--; });
      f = file;
      this.files.set(rolloutId, f);
    }
    return f;
  }

  path(rolloutId: string): string {
    if (!/^[\w.-]+$/.test(rolloutId)) throw new ClawGymError(ErrorCodes.ROLLOUT_ID_INVALID, `invalid rollout id: ${JSON.stringify(rolloutId)}`, { hint: 'Rollout ids name files: use letters, digits, ".", "-" and "_".' });
    return join(this.dir, `${rolloutId}.jsonl`);
  }

  /**
   * Append one record; resolves when it is in the file. Appends of one rollout keep their order;
   * a crash mid-record leaves a cut last line, which {@link read} skips. A line of up to
   * {@link SYNC_LINE} bytes, with nothing of its rollout still being written, is written at once
   * (a few µs into the page cache, without the thread-pool round trip that cost the proxy's calls
   * more than the write); a longer one is written piece by piece, never whole in memory.
   */
  append(record: ModelCallRecord): Promise<void> {
    const f = this.fileOf(record.rolloutId);
    const parts = storedParts(record);
    if (f.open && f.pending === 0) {
      try {
        const length = smallLine(parts);
        if (length !== undefined) {
          for (let at = 0; at < length;) at += writeSync(f.open.fd, scratch, at, length - at);
          return Promise.resolve();
        }
      } catch (err) {
        return Promise.reject(err);
      }
    }
    f.pending++;
    const done = f.tail.then(async () => {
      const h = await f.handle;
      for (const piece of lineOf(parts)) await (typeof piece === 'string' ? h.write(piece) : h.write(piece));
    });
    f.tail = done.catch(() => undefined).finally(() => { f.pending--; });
    return done;
  }

  /** Every record of a rollout, in call order. */
  async read(rolloutId: string): Promise<ModelCallRecord[]> {
    await this.files.get(rolloutId)?.tail;
    let text: string;
    try {
      text = await readFile(this.path(rolloutId), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    // A line cut by a crash mid-write is the only partial line possible: the last one.
    const stored = text.split('\n').filter((l) => l.trim()).flatMap((l) => {
      try { return [JSON.parse(l) as StoredRecord]; } catch { return []; }
    });
    return decode(stored, this.path(rolloutId));
  }

  /** Flush to disk and close the rollout's file. */
  async close(rolloutId: string): Promise<void> {
    const f = this.files.get(rolloutId);
    if (!f) return;
    this.files.delete(rolloutId);
    await f.tail;
    const h = await f.handle;
    await h.datasync();
    await h.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.files.keys()].map((id) => this.close(id)));
  }
}
