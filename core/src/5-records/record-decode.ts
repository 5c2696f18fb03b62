import type { CallHead, ModelCallRecord } from '../contracts/records';
import { ClawGymError, ErrorCodes } from '../errors';
import { floatsOf, idsOf } from './record-codec';
import { fileLines, jsonIdsCount, jsonIdsOf } from './record-lines';
import { ChainPlanner, type Placed } from './record-chains';

export type { CallHead } from '../contracts/records';

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

/** A line's prompt as a base call, how many of its ids it keeps, and how many new ids follow. */
interface Shape { ref?: number; keep: number; tail: number; output: number }

/** A line's {@link Shape}, given the lengths of the calls before it. */
function shapeOf(line: Line, lengths: ReadonlyMap<number, { prompt: number; output: number }>, path: string): Shape {
  const { head, ids, buf } = line;
  const ref = refOf(line);
  const base = ref === undefined ? undefined : lengths.get(ref);
  if (ref !== undefined && !base) throw missing(path, head.callIndex, ref);
  const output = head.out !== undefined ? varintCount(head.out) : head.outputIds?.length ?? 0;
  if (head.v === 2) return { ref: base ? ref : undefined, keep: base ? head.keep ?? 0 : 0, tail: ids ? varintCount(buf.toString('latin1', ids.start, ids.end)) : 0, output };
  if (ids?.kind === 'promptIds') return { keep: 0, tail: jsonIdsCount(buf, ids.start, ids.end), output };
  if (ids?.kind === 'promptTail') return { ref, keep: base!.prompt + base!.output, tail: jsonIdsCount(buf, ids.start, ids.end), output };
  if (head.promptIds) return { keep: 0, tail: head.promptIds.length, output };
  return { ref, keep: base!.prompt, tail: 0, output };
}

/** A line's new prompt ids (after the kept ones). */
function tailOf({ head, ids, buf }: Line): Int32Array {
  if (head.v === 2) return ids ? idsOf(buf.toString('latin1', ids.start, ids.end)) : new Int32Array(0);
  if (ids) return jsonIdsOf(buf, ids.start, ids.end);
  return head.promptIds ? Int32Array.from(head.promptIds) : new Int32Array(0);
}

/**
 * Every record of a file, in order, its prompt rebuilt, reading the file twice: first the shape
 * of every call (which call it builds on, how many ids it keeps and adds) to size the chains its
 * prompts are views of (see record-chains.ts), then the records. Memory is the chains: the
 * session's new tokens and a copy of the prefix at each fork, never one whole prompt a call;
 * a chain no later call builds on is left to its records' holders.
 */
export async function* decodeFile(path: string): AsyncGenerator<ModelCallRecord> {
  const lengths = new Map<number, { prompt: number; output: number }>();
  const uses = new Map<number, number>();
  const sizing = new ChainPlanner();
  const planned = new Map<number, Placed>();
  for await (const line of linesOf(path)) {
    const shape = shapeOf(line, lengths, path);
    if (shape.ref !== undefined) uses.set(shape.ref, (uses.get(shape.ref) ?? 0) + 1);
    const at = sizing.place(shape.ref === undefined ? undefined : planned.get(shape.ref), shape.keep, shape.tail, shape.output);
    planned.set(line.head.callIndex, at);
    lengths.set(line.head.callIndex, { prompt: at.promptEnd, output: shape.output });
  }
  planned.clear();
  lengths.clear();
  const placing = new ChainPlanner();
  const chains = new Map<number, Int32Array>();
  const kept = new Map<number, Placed & { prompt: Int32Array; output: number[] }>();
  const keptIn = new Map<number, number>();
  const count = (chain: number, by: number) => { const n = (keptIn.get(chain) ?? 0) + by; if (n > 0) keptIn.set(chain, n); else keptIn.delete(chain); };
  for await (const line of linesOf(path)) {
    const { head } = line;
    const shape = shapeOf(line, lengths, path);
    const ref = shape.ref;
    const base = ref === undefined ? undefined : kept.get(ref);
    if (ref !== undefined && !base) throw missing(path, head.callIndex, ref);
    const { outputIds, outputLogprobs } = outputOf(head);
    const at = placing.place(base, shape.keep, shape.tail, outputIds.length);
    let chain = chains.get(at.chain);
    if (!chain) chains.set(at.chain, chain = new Int32Array(sizing.capacity[at.chain]!));
    if (at.copy) copyPrefix(chain, base!, shape.keep);
    if (shape.tail) chain.set(tailOf(line), at.tailAt);
    if (at.outputInChain) chain.set(outputIds, at.promptEnd);
    const prompt = chain.subarray(0, at.promptEnd);
    lengths.set(head.callIndex, { prompt: at.promptEnd, output: outputIds.length });
    if (ref !== undefined) {
      const left = uses.get(ref)! - 1;
      if (left > 0) uses.set(ref, left); else { uses.delete(ref); kept.delete(ref); count(base!.chain, -1); }
    }
    if (uses.has(head.callIndex)) { kept.set(head.callIndex, { ...at, prompt, output: outputIds }); count(at.chain, 1); }
    // A chain no kept call is in is never written again: its records hold it, not the reader.
    if (!keptIn.has(at.chain)) chains.delete(at.chain);
    if (base && !keptIn.has(base.chain)) chains.delete(base.chain);
    yield { ...restOf(head), promptIds: prompt, outputIds, outputLogprobs } as ModelCallRecord;
  }
}

/** The first `keep` ids of a call's prompt followed by its output, at the start of `chain`. */
function copyPrefix(chain: Int32Array, base: { prompt: Int32Array; output: number[] }, keep: number): void {
  const fromPrompt = Math.min(keep, base.prompt.length);
  chain.set(base.prompt.subarray(0, fromPrompt));
  for (let i = fromPrompt; i < keep; i++) chain[i] = base.output[i - fromPrompt]!;
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
    const { head } = line;
    const shape = shapeOf(line, lengths, path);
    const { outputIds, outputLogprobs } = outputOf(head);
    const promptLength = shape.keep + shape.tail;
    lengths.set(head.callIndex, { prompt: promptLength, output: outputIds.length });
    yield { ...restOf(head), promptLength, outputIds, outputLogprobs } as CallHead;
  }
}
