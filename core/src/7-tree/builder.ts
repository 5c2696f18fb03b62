import { isSideCall, type ModelCallRecord } from '../contracts/records';
import type { RolloutTree, TreeNode } from '../contracts/tree';

/** What the builder needs to know about the rollout besides its calls. */
export type RolloutInfo = Pick<RolloutTree, 'rolloutId' | 'taskId' | 'category' | 'harness' | 'outcome' | 'reward'>;

export interface BuildOptions {
  /**
   * Token that ends a message in the engine's template (ChatML: `<|im_end|>`). A call joins an
   * existing tree only if it shares that tree's whole first message (its system prompt); a
   * call that shares less — a subagent, a title or summary side call, a compaction — roots a
   * new, auxiliary tree, even though every prompt starts with the same template tokens.
   */
  messageEndId: number;
}

/** A node under construction: a run of one kind, split when a later call diverges inside it. */
class Run {
  children: Run[] = [];
  /** Where calls' prompts and outputs end inside this run (offset just past their last token). */
  ends: { call: number; offset: number; what: 'prompt' | 'output' }[] = [];
  constructor(
    public parent: Run | null,
    public kind: 'inserted' | 'generated',
    public tokens: Int32Array,
    public logprobs: Float32Array | undefined,
    public callIndex: number,
  ) {}

  /** Keep tokens [0, at) here, move the rest (and children, and call ends) into a new child. */
  split(at: number): Run {
    const rest = new Run(this, this.kind, this.tokens.subarray(at), this.logprobs?.subarray(at), this.callIndex);
    rest.children = this.children;
    for (const c of rest.children) c.parent = rest;
    rest.ends = this.ends.filter((e) => e.offset > at).map((e) => ({ ...e, offset: e.offset - at }));
    this.ends = this.ends.filter((e) => e.offset <= at);
    this.tokens = this.tokens.subarray(0, at);
    this.logprobs = this.logprobs?.subarray(0, at);
    this.children = [rest];
    return rest;
  }
}

/** A position in a tree: inside `run`, after `offset` of its tokens. */
interface Pos { run: Run; offset: number }

class Tree {
  readonly root: Run;
  /** Called with the new run after a split moved call-end marks into it. */
  onSplit: (tree: Tree, rest: Run) => void = () => {};
  /** How a new run gets its ids from the sequence it is cut from (default: a view). */
  runIds: (seq: Int32Array, from: number) => Int32Array = (seq, from) => seq.subarray(from);
  /** Length of the root sequence's first message (see {@link BuildOptions.messageEndId}). */
  readonly firstMessageLength: number;
  constructor(first: Int32Array, messageEndId: number, callIndex: number) {
    this.root = new Run(null, 'inserted', new Int32Array(0), undefined, callIndex);
    const end = first.indexOf(messageEndId);
    this.firstMessageLength = end < 0 ? first.length : end + 1;
  }

  /** Longest common prefix of `seq` with this tree, without changing it. */
  commonPrefix(seq: Int32Array): number {
    let run = this.root;
    let p = 0;
    for (;;) {
      let off = 0;
      while (off < run.tokens.length && p < seq.length && run.tokens[off] === seq[p]) { off++; p++; }
      if (off < run.tokens.length || p === seq.length) return p;
      const next = run.children.find((c) => c.tokens[0] === seq[p]);
      if (!next) return p;
      run = next;
    }
  }

  /**
   * Walk `seq[from:]` from `pos`, sharing what matches; the unmatched rest becomes a new run of
   * `kind`. Returns the position after the last token.
   */
  insert(pos: Pos, seq: Int32Array, from: number, kind: 'inserted' | 'generated', logprobs: Float32Array | undefined, callIndex: number): Pos {
    let { run, offset } = pos;
    let p = from;
    for (;;) {
      while (offset < run.tokens.length && p < seq.length && run.tokens[offset] === seq[p]) { offset++; p++; }
      if (p === seq.length) return { run, offset };
      if (offset < run.tokens.length) this.onSplit(this, run.split(offset));
      const next = run.children.find((c) => c.tokens[0] === seq[p]);
      if (next) { run = next; offset = 0; continue; }
      const fresh = new Run(run, kind, this.runIds(seq, p), logprobs?.subarray(p - from), callIndex);
      run.children.push(fresh);
      return { run: fresh, offset: fresh.tokens.length };
    }
  }
}

/** A record's sampling distribution, when it is not plain softmax (temperature 1, top-p 1). */
/** The policy version that served a generated run's call. */
function versionOf(r: Pick<ModelCallRecord, 'policyVersion'> | undefined): { policyVersion?: number } {
  return r === undefined || r.policyVersion === undefined ? {} : { policyVersion: r.policyVersion };
}

function samplingOf(r: Pick<ModelCallRecord, 'sampling'> | undefined): { sampling?: { temperature: number; topP: number } } {
  const s = r?.sampling;
  return s && (s.temperature !== 1 || s.topP < 1) ? { sampling: { temperature: s.temperature, topP: s.topP } } : {};
}

/** What the builder keeps of an answered call once it is in the tree: lengths, not ids. */
interface CallInfo { promptLength: number; outputLength: number; sampling: ReturnType<typeof samplingOf>; version: ReturnType<typeof versionOf> }

const isAnswered = (r: Pick<ModelCallRecord, 'finishReason'>) => r.finishReason !== 'error' && r.finishReason !== 'aborted';

/**
 * Which answered call decides the main tree: the first marked main, else the first not marked
 * a side call. Read from the calls' heads (role and finish), in call order.
 */
export function firstMainCall(heads: Iterable<Pick<ModelCallRecord, 'callIndex' | 'role' | 'finishReason'>>): number | undefined {
  let main: number | undefined;
  let notSide: number | undefined;
  for (const h of heads) {
    if (!isAnswered(h)) continue;
    if (h.role === 'main' && (main === undefined || h.callIndex < main)) main = h.callIndex;
    if (!isSideCall(h.role) && (notSide === undefined || h.callIndex < notSide)) notSide = h.callIndex;
  }
  return main ?? notSide;
}

/**
 * Builds one rollout's prefix tree a call at a time, in call order. Calls that reuse a parent's
 * ids (the proxy's TITO records) attach at the end of the parent's output without re-reading
 * the history, so building costs the new tokens of each call; forks and retries are attached by
 * token-level longest-prefix search. Failed and aborted calls are left out (and counted). It
 * holds the tree and a few numbers a call, never a call's record; with `copyRuns` (a stream of
 * records whose arrays nothing else keeps) its runs never keep much of an array alive that the
 * tree does not use (see {@link ownIds}).
 */
export class TreeBuilder {
  private readonly trees: Tree[] = [];
  private mainTree: Tree | undefined;
  private readonly calls = new Map<number, CallInfo>();
  // Where each call's prompt and output end, so that TITO reuses and retries attach without
  // re-reading the history. Marks live on runs and move with them when a run is split.
  private readonly ends = new Map<string, { tree: Tree; run: Run }>();
  private seen = 0;
  private last = -1;

  /** `firstMain`: the call that decides the main tree (see {@link firstMainCall}). */
  constructor(private readonly options: BuildOptions & { firstMain: number | undefined; copyRuns?: boolean }) {}

  private endPos(call: number, what: 'prompt' | 'output'): { tree: Tree; pos: Pos } | undefined {
    const e = this.ends.get(`${what}${call}`);
    const mark = e?.run.ends.find((m) => m.call === call && m.what === what);
    return e && mark ? { tree: e.tree, pos: { run: e.run, offset: mark.offset } } : undefined;
  }

  private markEnd(tree: Tree, pos: Pos, call: number, what: 'prompt' | 'output'): void {
    pos.run.ends.push({ call, offset: pos.offset, what });
    this.ends.set(`${what}${call}`, { tree, run: pos.run });
  }

  /** A split moves marks into the new run: keep the index pointing at them. */
  private readonly moved = (tree: Tree, run: Run) => { for (const m of run.ends) this.ends.set(`${m.what}${m.call}`, { tree, run }); };

  /** Ids of each array the tree's runs are views of, from the array's start up to the last one. */
  private readonly viewed = new WeakMap<ArrayBufferLike, number>();

  /**
   * A run's ids, with `copyRuns`: a view of the record's array where the tree uses most of that
   * array up to the run's end (a chain of calls that extend one another, each adding its ids at
   * the end), else a copy (the last few ids of a prompt that owns its array, or of a fork that
   * starts with a copy of a prefix the tree already has): views never keep much the tree does
   * not hold.
   */
  private readonly ownIds = (seq: Int32Array, from: number): Int32Array => {
    const end = seq.byteOffset / 4 + seq.length;
    const used = (this.viewed.get(seq.buffer) ?? 0) + seq.length - from;
    if (used * 2 < end) return seq.slice(from);
    this.viewed.set(seq.buffer, used);
    return seq.subarray(from);
  };

  /** Add the next call (in call order). */
  add(r: ModelCallRecord): void {
    if (r.callIndex < this.last) throw new RangeError(`calls must come in call order: call ${r.callIndex} after call ${this.last}`);
    this.last = r.callIndex;
    this.seen++;
    if (!isAnswered(r)) return;
    const prompt = r.promptIds;
    let tree: Tree | undefined;
    let start: Pos | undefined;
    let from = 0;
    const parentIndex = r.origin.kind === 'reuse' ? r.origin.parentCall : r.origin.kind === 'retry' ? r.origin.of : undefined;
    const parent = parentIndex === undefined ? undefined : this.calls.get(parentIndex);
    const hint = !parent ? undefined
      : r.origin.kind === 'reuse' && r.origin.reusedTokens === parent.promptLength + parent.outputLength ? this.endPos(parentIndex!, 'output')
        : r.origin.kind === 'retry' && prompt.length === parent.promptLength ? this.endPos(parentIndex!, 'prompt') : undefined;
    const isFirstMain = r.callIndex === this.options.firstMain;
    if (hint) {
      tree = hint.tree;
      start = hint.pos;
      from = r.origin.kind === 'reuse' ? r.origin.reusedTokens : prompt.length;
    } else {
      let best: { t: Tree; common: number } | undefined;
      for (const t of this.trees) {
        // A call the harness marked as a side call never joins the main tree.
        if (isSideCall(r.role) && t === this.mainTree) continue;
        const common = t.commonPrefix(prompt);
        if (common >= t.firstMessageLength && (!best || common > best.common)) best = { t, common };
      }
      tree = best?.t;
      if (!tree || (isFirstMain && this.trees.length > 0 && tree !== this.trees[0])) {
        tree = new Tree(prompt, this.options.messageEndId, r.callIndex);
        tree.onSplit = this.moved;
        // The main tree is always trees[0].
        if (isFirstMain) { this.trees.unshift(tree); this.mainTree = tree; } else this.trees.push(tree);
      }
      start = { run: tree.root, offset: 0 };
    }
    if (this.options.copyRuns) tree.runIds = this.ownIds;
    const afterPrompt = tree.insert(start, prompt, from, 'inserted', undefined, r.callIndex);
    this.markEnd(tree, afterPrompt, r.callIndex, 'prompt');
    const afterOutput = tree.insert(afterPrompt, Int32Array.from(r.outputIds), 0, 'generated', Float32Array.from(r.outputLogprobs), r.callIndex);
    this.markEnd(tree, afterOutput, r.callIndex, 'output');
    this.calls.set(r.callIndex, { promptLength: prompt.length, outputLength: r.outputIds.length, sampling: samplingOf(r), version: versionOf(r) });
  }

  /**
   * The tree: parents before children, main tree first; each tree's empty root run is elided,
   * so its first run(s) become nodes with parent -1 (auxiliary roots for every tree but the main).
   */
  finish(info: RolloutInfo): RolloutTree {
    const nodes: TreeNode[] = [];
    const auxiliaryRoots: number[] = [];
    for (const t of this.trees) {
      const stack: [Run, number][] = t.root.children.map((c) => [c, -1] as [Run, number]).reverse();
      while (stack.length) {
        const [run, parentId] = stack.pop()!;
        const id = nodes.length;
        if (parentId === -1 && t !== this.mainTree) auxiliaryRoots.push(id);
        nodes.push({
          id, parent: parentId, kind: run.kind, tokens: run.tokens, callIndex: run.callIndex,
          ...(run.kind === 'generated' ? { logprobs: run.logprobs, ...this.calls.get(run.callIndex)?.sampling, ...this.calls.get(run.callIndex)?.version } : {}),
        });
        for (let c = run.children.length - 1; c >= 0; c--) stack.push([run.children[c]!, id]);
      }
    }
    const answered = [...this.calls.keys()].length;
    return { ...info, nodes, auxiliaryRoots, filterCounts: { 'failed-call': this.seen - answered }, calls: this.seen };
  }
}

/** Rebuild the prefix tree of one rollout from its model calls (see {@link TreeBuilder}). */
export function buildTree(records: readonly ModelCallRecord[], info: RolloutInfo, options: BuildOptions): RolloutTree {
  const sorted = [...records].sort((a, b) => a.callIndex - b.callIndex);
  const builder = new TreeBuilder({ ...options, firstMain: firstMainCall(sorted) });
  for (const r of sorted) builder.add(r);
  return builder.finish(info);
}
