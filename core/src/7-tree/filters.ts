import type { RolloutTree, TreeNode } from '../contracts/tree';
import { appendAll } from '../util/append';
import { auxiliaryNodeIds } from './trainable';

/** Settings of the built-in filters (the config's `tree` section). */
export interface FilterOptions {
  dropDeadLeaves: boolean;
  excludeAuxiliary: boolean;
  /** A rollout whose main tree keeps more leaves than this is dropped whole. */
  maxBranches: number;
}

const generatedTokens = (nodes: readonly TreeNode[]) => nodes.reduce((n, x) => n + (x.kind === 'generated' ? x.tokens.length : 0), 0);

function children(tree: RolloutTree): number[][] {
  const out: number[][] = tree.nodes.map(() => []);
  for (const n of tree.nodes) if (n.parent >= 0) out[n.parent]!.push(n.id);
  return out;
}

/**
 * Dead leaves: a retry or regeneration leaves sibling branches at one point. At every branching
 * node, a child subtree that holds the output of a single call and nothing after it, while a
 * sibling subtree goes on to later calls, was abandoned by the harness: its generated tokens are
 * removed. The branch with the longest valid continuation stays. A branch the harness continued
 * (several calls, e.g. before a history rewrite) is a real branch and stays.
 * Returns the generated tokens removed.
 */
export function removeDeadLeaves(tree: RolloutTree): number {
  const kids = children(tree);
  const maxCall = tree.nodes.map((n) => n.callIndex);
  const minGen = tree.nodes.map((n) => (n.kind === 'generated' ? n.callIndex : Infinity));
  const maxGen = tree.nodes.map((n) => (n.kind === 'generated' ? n.callIndex : -Infinity));
  // Nodes are parents-first: a backward pass folds every subtree into its root.
  for (let i = tree.nodes.length - 1; i >= 0; i--) {
    const p = tree.nodes[i]!.parent;
    if (p < 0) continue;
    maxCall[p] = Math.max(maxCall[p]!, maxCall[i]!);
    minGen[p] = Math.min(minGen[p]!, minGen[i]!);
    maxGen[p] = Math.max(maxGen[p]!, maxGen[i]!);
  }
  let removed = 0;
  const mark = (id: number) => {
    const stack = [id];
    while (stack.length) {
      const n = tree.nodes[stack.pop()!]!;
      if (n.kind === 'generated' && !n.removedBy) { n.removedBy = 'dead-leaf'; removed += n.tokens.length; }
      appendAll(stack, kids[n.id]!);
    }
  };
  for (const k of kids) {
    if (k.length < 2) continue;
    const latest = k.reduce((m, c) => Math.max(m, maxCall[c]!), -Infinity);
    for (const c of k) if (minGen[c] === maxGen[c] && maxCall[c] === maxGen[c] && maxCall[c]! < latest) mark(c);
  }
  return removed;
}

/** Leaves of the main tree that still carry trainable tokens on their path. */
export function keptLeaves(tree: RolloutTree): number {
  const aux = auxiliaryNodeIds(tree);
  const kids = children(tree);
  return tree.nodes.filter((n) => !aux.has(n.id) && !n.removedBy && kids[n.id]!.every((c) => tree.nodes[c]!.removedBy === 'dead-leaf')).length;
}

/**
 * The built-in filters, in order, each counted in `filterCounts` (generated tokens removed,
 * or 1 for a rollout dropped): infrastructure failures, dead leaves, auxiliary trees,
 * over-branching. Plugins add their own through the `onTreeBuilt` hook.
 */
export function applyFilters(tree: RolloutTree, options: FilterOptions): RolloutTree {
  const counts = tree.filterCounts;
  const total = generatedTokens(tree.nodes);
  if (tree.outcome === 'infra-error' || tree.outcome === 'timeout') {
    tree.dropped = `infrastructure failure (${tree.outcome}): never scored, never trained`;
    counts.infra = 1;
    counts['dropped-tokens'] = total;
    return tree;
  }
  counts['dead-leaf'] = options.dropDeadLeaves ? removeDeadLeaves(tree) : 0;
  let auxTokens = 0;
  for (const id of auxiliaryNodeIds(tree)) {
    const n = tree.nodes[id]!;
    if (n.kind === 'generated' && !n.removedBy) {
      auxTokens += n.tokens.length;
      if (options.excludeAuxiliary) n.removedBy = 'auxiliary';
    }
  }
  counts.auxiliary = options.excludeAuxiliary ? auxTokens : 0;
  const leaves = keptLeaves(tree);
  if (leaves > options.maxBranches) {
    tree.dropped = `over-branching: ${leaves} leaves > maxBranches ${options.maxBranches}`;
    counts['over-branching'] = 1;
    counts['dropped-tokens'] = total - counts['dead-leaf'] - counts.auxiliary;
  }
  return tree;
}
