import 'reflect-metadata';
import { existsSync, fstatSync, writeSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'tsyringe';
import type { ModelCallRecord, RecordStore } from '../contracts/records';
import { ClawGymError, ErrorCodes } from '../errors';
import { ServiceTokens } from '../6-rollout/tokens';
import { isWriteFailure } from '../util/write-failure';
import { floatsText, idsBase64, idsText } from './record-codec';
import { decodeFile, headsOfFile, type CallHead } from './record-decode';

/** Fork prefixes shorter than this are written whole (a reference would save nothing). */
const MIN_SHARED = 64;
/** Earlier calls a fork's prompt is compared with, newest first. */
const CANDIDATES = 64;

/** Lines up to this many bytes are appended synchronously (see {@link CallStore.append}). */
const SYNC_LINE = 64 * 1024;

/** What a rollout's writer remembers of its calls: their ids, for a fork's shared prefix. */
interface Written { callIndex: number; prompt: Int32Array; output: readonly number[] }

/** How many leading ids `prompt` shares with `w`'s prompt followed by its output. */
function sharedPrefix(prompt: Int32Array, w: Written): number {
  const n = Math.min(prompt.length, w.prompt.length + w.output.length);
  const inPrompt = Math.min(n, w.prompt.length);
  let i = 0;
  while (i < inPrompt && prompt[i] === w.prompt[i]) i++;
  if (i < inPrompt) return i;
  while (i < n && prompt[i] === w.output[i - w.prompt.length]) i++;
  return i;
}

/** The earlier call a prompt is stored against, and how many of its ids (prompt, then output) it keeps. */
function referenceOf(r: ModelCallRecord, earlier: readonly Written[]): { ref: number; keep: number } | undefined {
  if (r.origin.kind === 'reuse') return { ref: r.origin.parentCall, keep: r.origin.reusedTokens };
  if (r.origin.kind === 'retry') return { ref: r.origin.of, keep: r.promptIds.length };
  // A fork still shares most of its prompt with some earlier call (the system prompt and the
  // history up to where it diverged): stored by reference too.
  let best: { ref: number; keep: number } | undefined;
  for (let i = earlier.length - 1; i >= Math.max(0, earlier.length - CANDIDATES); i--) {
    const keep = sharedPrefix(r.promptIds, earlier[i]!);
    if (keep >= MIN_SHARED && (!best || keep > best.keep)) best = { ref: earlier[i]!.callIndex, keep };
  }
  return best;
}

/**
 * A record's line (format 2, docs/records.md), newline included, in pieces to write one after
 * another: the record without its ids, its output and log-probabilities compactly encoded, the
 * call its prompt builds on and how many ids it keeps of it, and last the prompt's new ids —
 * a piece at a time, never whole in memory.
 */
function* lineOf(r: ModelCallRecord, reference: { ref: number; keep: number } | undefined): Generator<string> {
  const { promptIds, outputIds, outputLogprobs, ...rest } = r;
  const head = JSON.stringify(rest);
  const ref = reference ? `,"ref":${reference.ref},"keep":${reference.keep}` : '';
  yield `${head.slice(0, -1)},"v":2,"out":"${idsText(outputIds)}","lp":"${floatsText(outputLogprobs)}"${ref},"ids":"`;
  yield* idsBase64(promptIds.subarray(reference?.keep ?? 0));
  yield '"}\n';
}

/** Where every small line is made: written and done before the next one starts. */
const scratch = Buffer.allocUnsafe(SYNC_LINE);

/**
 * A line's pieces in {@link scratch} when the whole line fits: the bytes to write. Otherwise the
 * pieces taken so far, to be written before the rest (the generator is not rewound).
 */
function smallLine(pieces: Generator<string>): Buffer | string[] {
  const taken: string[] = [];
  let at = 0;
  // Taken with next(), not for…of: leaving a for…of early would close the generator.
  for (let r = pieces.next(); !r.done; r = pieces.next()) {
    const piece = r.value;
    taken.push(piece);
    // Each UTF-16 unit is at most 3 bytes: a piece that may not fit leaves the fast path.
    if (at + piece.length * 3 > SYNC_LINE) return taken;
    at += scratch.write(piece, at, 'utf8');
  }
  return scratch.subarray(0, at);
}

/** A rollout's open file, the appends queued on it, and the calls written to it. */
interface FileState { handle: Promise<FileHandle>; tail: Promise<void>; open?: FileHandle; pending: number; written: Written[] }

/**
 * The run store's call records: one JSONL file per rollout under `<dir>/`, appended in call
 * order. `append` resolves once the line is written to the file (the proxy awaits it before
 * sending a response's final event), so a crash of this process never loses an answered call.
 */
@injectable()
export class CallStore implements RecordStore {
  private readonly files = new Map<string, FileState>();
  private readonly listeners: ((err: NodeJS.ErrnoException) => void)[] = [];
  /** The first write this store could not make (its folder full, read-only, not ours or removed). */
  failure?: NodeJS.ErrnoException;

  /** Call `listener` on each write this store cannot make (a run stops on the first). */
  onWriteFailure(listener: (err: NodeJS.ErrnoException) => void): void {
    this.listeners.push(listener);
  }

  private failed(err: unknown): unknown {
    if (isWriteFailure(err)) {
      this.failure ??= err;
      for (const l of this.listeners) l(err);
    }
    return err;
  }

  /**
   * A record written into a file that was removed meanwhile (its folder deleted under a running
   * server) is written nowhere: a failure, so that the call is not answered as if recorded.
   */
  private checkLinked(fd: number, rolloutId: string): void {
    if (fstatSync(fd).nlink > 0) return;
    const path = this.path(rolloutId);
    throw Object.assign(new Error(`ENOENT: the records file was removed while it was written, ${path}`), { code: 'ENOENT', path, syscall: 'write' });
  }

  /** In the run container the folder is the scope's `Tokens.CallsDir`. */
  constructor(@inject(ServiceTokens.CallsDir) readonly dir: string) {}

  private fileOf(rolloutId: string) {
    let f = this.files.get(rolloutId);
    if (!f) {
      const handle = mkdir(this.dir, { recursive: true }).then(() => open(this.path(rolloutId), 'a'));
      const file: FileState = { handle, tail: Promise.resolve(), pending: 1, written: [] };
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
    const reference = referenceOf(record, f.written);
    // Kept for a later fork to find its shared prefix in: the ids themselves are the caller's
    // (views of the session's ledger), not copies.
    f.written.push({ callIndex: record.callIndex, prompt: record.promptIds, output: record.outputIds });
    if (f.written.length > CANDIDATES) f.written.shift();
    const pieces = lineOf(record, reference);
    let taken: string[] = [];
    if (f.open && f.pending === 0) {
      try {
        const line = smallLine(pieces);
        if (!Array.isArray(line)) {
          for (let at = 0; at < line.length;) at += writeSync(f.open.fd, line, at, line.length - at);
          this.checkLinked(f.open.fd, record.rolloutId);
          return Promise.resolve();
        }
        taken = line;
      } catch (err) {
        return Promise.reject(this.failed(err));
      }
    }
    f.pending++;
    const done = f.tail.then(async () => {
      const h = await f.handle;
      for (const piece of taken) await h.write(piece);
      for (const piece of pieces) await h.write(piece);
      this.checkLinked(h.fd, record.rolloutId);
    }).catch((err: unknown) => { throw this.failed(err); });
    f.tail = done.catch(() => undefined).finally(() => { f.pending--; });
    return done;
  }

  /** Every record of a rollout, in call order, its prompt ids rebuilt (see {@link stream} for one at a time). */
  async read(rolloutId: string): Promise<ModelCallRecord[]> {
    const out: ModelCallRecord[] = [];
    for await (const r of this.stream(rolloutId)) out.push(r);
    return out;
  }

  /**
   * The records of a rollout one at a time, in call order, read from the file in chunks: a
   * session of any size is read in the memory of the records being used (plus the calls later
   * ones still build on), never the whole file.
   */
  async *stream(rolloutId: string): AsyncGenerator<ModelCallRecord> {
    await this.files.get(rolloutId)?.tail;
    if (!existsSync(this.path(rolloutId))) return;
    yield* decodeFile(this.path(rolloutId));
  }

  /** The records of a rollout without their prompt ids (one pass, one line in memory): what statistics need. */
  async *heads(rolloutId: string): AsyncGenerator<CallHead> {
    await this.files.get(rolloutId)?.tail;
    if (!existsSync(this.path(rolloutId))) return;
    yield* headsOfFile(this.path(rolloutId));
  }

  /** Flush to disk and close the rollout's file. */
  async close(rolloutId: string): Promise<void> {
    const f = this.files.get(rolloutId);
    if (f) f.written.length = 0;
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
