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
      const fresh = new Run(run, kind, seq.subarray(p), logprobs?.subarray(p - from), callIndex);
      run.children.push(fresh);
      return { run: fresh, offset: fresh.tokens.length };
    }
  }
}

/**
 * Rebuild the prefix tree of one rollout from its model calls. Calls that reuse a parent's ids
 * (the proxy's TITO records) attach at the end of the parent's output without re-reading the
 * history, so building costs the new tokens of each call; forks and retries are attached by
 * token-level longest-prefix search. Failed and aborted calls are left out (and counted).
 */
/** A record's sampling distribution, when it is not plain softmax (temperature 1, top-p 1). */
/** The policy version that served a generated run's call. */
function versionOf(r: ModelCallRecord | undefined): { policyVersion?: number } {
  return r === undefined ? {} : { policyVersion: r.policyVersion };
}

function samplingOf(r: ModelCallRecord | undefined): { sampling?: { temperature: number; topP: number } } {
  const s = r?.sampling;
  return s && (s.temperature !== 1 || s.topP < 1) ? { sampling: { temperature: s.temperature, topP: s.topP } } : {};
}

export function buildTree(records: readonly ModelCallRecord[], info: RolloutInfo, options: BuildOptions): RolloutTree {
  const answered = [...records].sort((a, b) => a.callIndex - b.callIndex).filter((r) => r.finishReason !== 'error' && r.finishReason !== 'aborted');
  const byIndex = new Map(answered.map((r) => [r.callIndex, r]));
  const trees: Tree[] = [];
  // Where each call's prompt and output end, so that TITO reuses and retries attach without
  // re-reading the history. Marks live on runs and move with them when a run is split.
  const ends = new Map<string, { tree: Tree; run: Run }>();
  const endPos = (call: number, what: 'prompt' | 'output'): { tree: Tree; pos: Pos } | undefined => {
    const e = ends.get(`${what}${call}`);
    const mark = e?.run.ends.find((m) => m.call === call && m.what === what);
    return e && mark ? { tree: e.tree, pos: { run: e.run, offset: mark.offset } } : undefined;
  };
  // A split moves marks into the new run: keep the index pointing at them.
  const moved = (tree: Tree, run: Run) => { for (const m of run.ends) ends.set(`${m.what}${m.call}`, { tree, run }); };
  const markEnd = (tree: Tree, pos: Pos, call: number, what: 'prompt' | 'output') => {
    pos.run.ends.push({ call, offset: pos.offset, what });
    ends.set(`${what}${call}`, { tree, run: pos.run });
  };
  // Main-agent calls first decide the main tree: the first call marked main, else the first call.
  const firstMain = answered.find((r) => r.role === 'main') ?? answered.find((r) => !isSideCall(r.role));
  let mainTree: Tree | undefined;

  for (const r of answered) {
    const prompt = r.promptIds;
    const output = Int32Array.from(r.outputIds);
    let tree: Tree | undefined;
    let start: Pos | undefined;
    let from = 0;
    const parent = r.origin.kind === 'reuse' ? byIndex.get(r.origin.parentCall) : r.origin.kind === 'retry' ? byIndex.get(r.origin.of) : undefined;
    const hint = !parent ? undefined
      : r.origin.kind === 'reuse' && r.origin.reusedTokens === parent.promptIds.length + parent.outputIds.length ? endPos(parent.callIndex, 'output')
        : r.origin.kind === 'retry' && prompt.length === parent.promptIds.length ? endPos(parent.callIndex, 'prompt') : undefined;
    if (hint) {
      tree = hint.tree;
      start = hint.pos;
      from = r.origin.kind === 'reuse' ? r.origin.reusedTokens : prompt.length;
    } else {
      let best: { t: Tree; common: number } | undefined;
      for (const t of trees) {
        // A call the harness marked as a side call never joins the main tree.
        if (isSideCall(r.role) && t === mainTree) continue;
        const common = t.commonPrefix(prompt);
        if (common >= t.firstMessageLength && (!best || common > best.common)) best = { t, common };
      }
      tree = best?.t;
      if (!tree || (r === firstMain && trees.length > 0 && tree !== trees[0])) {
        tree = new Tree(prompt, options.messageEndId, r.callIndex);
        tree.onSplit = moved;
        // The main tree is always trees[0].
        if (r === firstMain) { trees.unshift(tree); mainTree = tree; } else trees.push(tree);
      }
      start = { run: tree.root, offset: 0 };
    }
    const afterPrompt = tree.insert(start, prompt, from, 'inserted', undefined, r.callIndex);
    markEnd(tree, afterPrompt, r.callIndex, 'prompt');
    const logprobs = Float32Array.from(r.outputLogprobs);
    const afterOutput = tree.insert(afterPrompt, output, 0, 'generated', logprobs, r.callIndex);
    markEnd(tree, afterOutput, r.callIndex, 'output');
  }

  // Flatten: parents before children, main tree first; each tree's empty root run is elided,
  // so its first run(s) become nodes with parent -1 (auxiliary roots for every tree but the main).
  const nodes: TreeNode[] = [];
  const auxiliaryRoots: number[] = [];
  trees.forEach((t) => {
    const stack: [Run, number][] = t.root.children.map((c) => [c, -1] as [Run, number]).reverse();
    while (stack.length) {
      const [run, parentId] = stack.pop()!;
      const id = nodes.length;
      if (parentId === -1 && t !== mainTree) auxiliaryRoots.push(id);
      nodes.push({
        id, parent: parentId, kind: run.kind, tokens: run.tokens, callIndex: run.callIndex,
        ...(run.kind === 'generated' ? { logprobs: run.logprobs, ...samplingOf(byIndex.get(run.callIndex)), ...versionOf(byIndex.get(run.callIndex)) } : {}),
      });
      for (let c = run.children.length - 1; c >= 0; c--) stack.push([run.children[c]!, id]);
    }
  });
  return {
    ...info,
    nodes,
    auxiliaryRoots,
    filterCounts: { 'failed-call': records.length - answered.length },
    calls: records.length,
  };
}
