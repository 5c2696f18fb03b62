import type { ModelCallRecord } from '../contracts/records';
import { ClawGymError, ErrorCodes } from '../errors';
import { floatsOf, idsOf } from './record-codec';
import { fileLines, jsonIdsCount, jsonIdsOf } from './record-lines';

/** A record without its prompt's ids: what statistics read (the ids of a long session are most of its size). */
export type CallHead = Omit<ModelCallRecord, 'promptIds'> & { promptLength: number };

/** A line's JSON without its prompt ids (format 2 fields, or an older line's arrays). */
type Head = Omit<ModelCallRecord, 'promptIds' | 'outputIds' | 'outputLogprobs'> & {
  outputIds?: number[]; outputLogprobs?: number[]; promptIds?: number[];
  v?: number; out?: string; lp?: string; ref?: number; keep?: number;
};

/** One line split into its head and where its prompt ids are (none: a retry of an older file). */
interface Line { head: Head; buf: Buffer; ids?: { kind: 'ids' | 'promptIds' | 'promptTail'; start: number; end: number } }

const MARKS = [
  { kind: 'ids' as const, mark: Buffer.from(',"ids":"'), close: '"}' },
  { kind: 'promptIds' as const, mark: Buffer.from(',"promptIds":['), close: ']}' },
  { kind: 'promptTail' as const, mark: Buffer.from(',"promptTail":['), close: ']}' },
];

/**
 * Split a line: its ids come last (every writer put them there), so the head is the text before
 * their key, parsed on its own; the ids are read from the bytes. A line that does not end as a
 * record does (cut by a crash mid-write) is undefined.
 */
function splitLine(buf: Buffer): Line | undefined {
  try {
    for (const { kind, mark, close } of MARKS) {
      if (buf.length < 2 || buf.toString('latin1', buf.length - 2) !== close) continue;
      const at = buf.lastIndexOf(mark);
      if (at < 0) continue;
      const head = JSON.parse(`${buf.toString('utf8', 0, at)}}`) as Head;
      const start = at + mark.length - (kind === 'ids' ? 0 : 1);
      return { head, buf, ids: { kind, start, end: buf.length - (kind === 'ids' ? 2 : 1) } };
    }
    return { head: JSON.parse(buf.toString('utf8')) as Head, buf };
  } catch {
    return undefined;
  }
}

/** The call a line's prompt is built on, if any. */
function refOf({ head, ids }: Line): number | undefined {
  if (head.v === 2) return head.ref;
  if (ids?.kind === 'promptTail' && head.origin.kind === 'reuse') return head.origin.parentCall;
  if (!ids && !head.promptIds && head.origin.kind === 'retry') return head.origin.of;
  return undefined;
}

const outputOf = (head: Head) => ({
  outputIds: head.out !== undefined ? Array.from(idsOf(head.out)) : head.outputIds ?? [],
  outputLogprobs: head.lp !== undefined ? floatsOf(head.lp) : head.outputLogprobs ?? [],
});

function restOf(head: Head): Omit<ModelCallRecord, 'promptIds' | 'outputIds' | 'outputLogprobs'> {
  const { v: _v, out: _o, lp: _l, ref: _r, keep: _k, outputIds: _oi, outputLogprobs: _ol, promptIds: _p, ...rest } = head as Head & { promptTail?: unknown };
  delete (rest as { promptTail?: unknown }).promptTail;
  return rest;
}

const missing = (file: string, call: number, parent: number) => new ClawGymError(ErrorCodes.RECORDS_INVALID, `${file}: call ${call} refers to call ${parent}, which is not in the file`, { hint: 'The file was edited or cut before that call; the rollout\'s records cannot be rebuilt. Remove the file (its rollout is then missing records: an infrastructure failure).' });

/** The lines of a record file that parse (a cut last line is skipped). */
async function* linesOf(path: string): AsyncGenerator<Line> {
  for await (const buf of fileLines(path)) {
    if (buf.length === 0 || buf.every((c) => c === 32 || c === 13 || c === 9)) continue;
    const line = splitLine(buf);
    if (line) yield line;
  }
}

/**
 * Every record of a file, in order, its prompt rebuilt, reading the file twice: once for which
 * calls later ones build on (and how many times), then to rebuild, keeping a call's ids only
 * until the last call that builds on it. Memory is the records being read plus the calls still
 * referred to, not the file: a session whose calls each extend the previous keeps one.
 */
export async function* decodeFile(path: string): AsyncGenerator<ModelCallRecord> {
  const uses = new Map<number, number>();
  for await (const line of linesOf(path)) {
    const ref = refOf(line);
    if (ref !== undefined) uses.set(ref, (uses.get(ref) ?? 0) + 1);
  }
  const kept = new Map<number, { prompt: Int32Array; output: number[] }>();
  for await (const line of linesOf(path)) {
    const { head, ids, buf } = line;
    const ref = refOf(line);
    const base = ref === undefined ? undefined : kept.get(ref);
    if (ref !== undefined && !base) throw missing(path, head.callIndex, ref);
    const { outputIds, outputLogprobs } = outputOf(head);
    let prompt: Int32Array;
    if (head.v === 2) {
      const tail = ids ? idsOf(buf.toString('latin1', ids.start, ids.end)) : new Int32Array(0);
      prompt = base ? joined(base, head.keep ?? 0, tail) : tail;
    } else if (ids?.kind === 'promptIds') prompt = jsonIdsOf(buf, ids.start, ids.end);
    else if (ids?.kind === 'promptTail') prompt = joined(base!, base!.prompt.length + base!.output.length, jsonIdsOf(buf, ids.start, ids.end));
    else if (head.promptIds) prompt = Int32Array.from(head.promptIds);
    else prompt = base!.prompt;
    if (ref !== undefined) {
      const left = uses.get(ref)! - 1;
      if (left > 0) uses.set(ref, left); else { uses.delete(ref); kept.delete(ref); }
    }
    if (uses.has(head.callIndex)) kept.set(head.callIndex, { prompt, output: outputIds });
    yield { ...restOf(head), promptIds: prompt, outputIds, outputLogprobs } as ModelCallRecord;
  }
}

/** The first `keep` ids of a call's prompt followed by its output, then `tail`. */
function joined(base: { prompt: Int32Array; output: number[] }, keep: number, tail: Int32Array): Int32Array {
  const out = new Int32Array(keep + tail.length);
  const fromPrompt = Math.min(keep, base.prompt.length);
  out.set(base.prompt.subarray(0, fromPrompt));
  for (let i = fromPrompt; i < keep; i++) out[i] = base.output[i - fromPrompt]!;
  out.set(tail, keep);
  return out;
}

/** Varints in a base64 text: the bytes under 0x80. */
function varintCount(text: string): number {
  const bytes = Buffer.from(text, 'base64');
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! < 0x80) n++;
  return n;
}

/**
 * Every record of a file without its prompt's ids, in one pass: memory is one line at a time,
 * and a number per call (its prompt's length, which a later call's may build on).
 */
export async function* headsOfFile(path: string): AsyncGenerator<CallHead> {
  const lengths = new Map<number, { prompt: number; output: number }>();
  for await (const line of linesOf(path)) {
    const { head, ids, buf } = line;
    const { outputIds, outputLogprobs } = outputOf(head);
    const ref = refOf(line);
    const base = ref === undefined ? undefined : lengths.get(ref);
    if (ref !== undefined && !base) throw missing(path, head.callIndex, ref);
    let promptLength: number;
    if (head.v === 2) promptLength = (base ? head.keep ?? 0 : 0) + (ids ? varintCount(buf.toString('latin1', ids.start, ids.end)) : 0);
    else if (ids?.kind === 'promptIds') promptLength = jsonIdsCount(buf, ids.start, ids.end);
    else if (ids?.kind === 'promptTail') promptLength = base!.prompt + base!.output + jsonIdsCount(buf, ids.start, ids.end);
    else if (head.promptIds) promptLength = head.promptIds.length;
    else promptLength = base!.prompt;
    lengths.set(head.callIndex, { prompt: promptLength, output: outputIds.length });
    yield { ...restOf(head), promptLength, outputIds, outputLogprobs } as CallHead;
  }
}
