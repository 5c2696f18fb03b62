import type { AdvantageResult, RolloutTree } from '../contracts/tree';

/**
 * A rollout tree packed for a trainer with tree attention: every token once, parents first;
 * `parents[i]` is the previous token on token i's path (-1 at a root), so token i attends to
 * its ancestors only, and `positions[i]` is its depth (its position id).
 */
export interface PackedTree {
  rolloutId: string;
  tokens: Int32Array;
  parents: Int32Array;
  positions: Int32Array;
  /** 1 where the token is trained: generated, kept by every filter. */
  lossMask: Uint8Array;
  /** Engine logprobs of generated tokens (0 elsewhere). */
  rolloutLogprobs: Float32Array;
  /** The policy version that generated each trained token, whose logprob `rolloutLogprobs` holds (-1 elsewhere). */
  policyVersions?: Int32Array;
  advantages: Float32Array;
  valueTargets?: Float32Array;
  /** Where each tree node's tokens start in the packed arrays (-1: not packed). */
  nodeOffsets: Int32Array;
}

/** One root-to-leaf path, for trainers without tree attention. */
export interface FlatBranch {
  rolloutId: string;
  tokens: Int32Array;
  /** 1 where trained; a token shared with an earlier branch is masked here, so it counts once. */
  lossMask: Uint8Array;
  rolloutLogprobs: Float32Array;
  advantages: Float32Array;
  valueTargets?: Float32Array;
}

/** Nodes worth packing: trainable ones and their ancestors (dead leaves and auxiliary trees drop out). */
function neededNodes(tree: RolloutTree, adv: AdvantageResult): boolean[] {
  const trained = adv.advantages.get(tree.rolloutId);
  const needed = tree.nodes.map((n) => Boolean(trained?.has(n.id)));
  for (let i = tree.nodes.length - 1; i >= 0; i--) {
    const p = tree.nodes[i]!.parent;
    if (needed[i] && p >= 0) needed[p] = true;
  }
  return needed;
}

/** Pack one tree (after filters and advantages) for tree attention. */
export function packTree(tree: RolloutTree, adv: AdvantageResult): PackedTree {
  const needed = neededNodes(tree, adv);
  const trained = adv.advantages.get(tree.rolloutId);
  const targets = adv.valueTargets?.get(tree.rolloutId);
  const total = tree.nodes.reduce((n, x, i) => n + (needed[i] ? x.tokens.length : 0), 0);
  const out: PackedTree = {
    rolloutId: tree.rolloutId,
    tokens: new Int32Array(total), parents: new Int32Array(total), positions: new Int32Array(total),
    lossMask: new Uint8Array(total), rolloutLogprobs: new Float32Array(total), advantages: new Float32Array(total),
    ...(targets ? { valueTargets: new Float32Array(total) } : {}),
    nodeOffsets: new Int32Array(tree.nodes.length).fill(-1),
    policyVersions: new Int32Array(total).fill(-1),
  };
  const lastIndex = new Int32Array(tree.nodes.length).fill(-1);
  let k = 0;
  for (const node of tree.nodes) {
    if (!needed[node.id]) continue;
    out.nodeOffsets[node.id] = k;
    let prev = node.parent >= 0 ? lastIndex[node.parent]! : -1;
    const a = trained?.get(node.id);
    const v = targets?.get(node.id);
    for (let t = 0; t < node.tokens.length; t++, k++) {
      out.tokens[k] = node.tokens[t]!;
      out.parents[k] = prev;
      out.positions[k] = prev < 0 ? 0 : out.positions[prev]! + 1;
      if (a) {
        out.lossMask[k] = 1;
        out.advantages[k] = a[t]!;
        out.rolloutLogprobs[k] = node.logprobs?.[t] ?? 0;
        out.policyVersions![k] = node.policyVersion ?? -1;
        if (v) out.valueTargets![k] = v[t]!;
      }
      prev = k;
    }
    lastIndex[node.id] = k - 1;
  }
  return out;
}

/**
 * Flatten a packed tree into its root-to-leaf branches. The loss mask of a shared token is set
 * only in the first branch that contains it, so every trained token is counted exactly once.
 */
export function flattenBranches(packed: PackedTree): FlatBranch[] {
  const n = packed.tokens.length;
  const hasChild = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (packed.parents[i]! >= 0) hasChild[packed.parents[i]!] = 1;
  const claimed = new Uint8Array(n);
  const branches: FlatBranch[] = [];
  for (let leaf = 0; leaf < n; leaf++) {
    if (hasChild[leaf]) continue;
    const path: number[] = [];
    for (let i = leaf; i >= 0; i = packed.parents[i]!) path.push(i);
    path.reverse();
    const pick = <T extends Int32Array | Float32Array>(src: T, make: (len: number) => T) => {
      const dst = make(path.length);
      path.forEach((i, j) => { dst[j] = src[i]!; });
      return dst;
    };
    const lossMask = new Uint8Array(path.length);
    path.forEach((i, j) => { if (packed.lossMask[i] && !claimed[i]) { lossMask[j] = 1; claimed[i] = 1; } });
    branches.push({
      rolloutId: packed.rolloutId,
      tokens: pick(packed.tokens, (l) => new Int32Array(l)),
      lossMask,
      rolloutLogprobs: pick(packed.rolloutLogprobs, (l) => new Float32Array(l)),
      advantages: pick(packed.advantages, (l) => new Float32Array(l)),
      ...(packed.valueTargets ? { valueTargets: pick(packed.valueTargets, (l) => new Float32Array(l)) } : {}),
    });
  }
  return branches;
}
