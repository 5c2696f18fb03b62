import { clippedTisLoss, datumStep, LOSS_REDUCTIONS, treesToDatums, type AdvantageResult, type LossReduction, type RolloutTree, type TrainerBatch, type TreeNode } from '@clawgym/core';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { computeGrpo } from '../../algo-grpo/src/grpo';
import { computePpo } from '../../algo-ppo/src/ppo';
import { SharedPolicy } from './policy';
import { EmbeddedTrainer } from './trainer';
import type { Params } from './model';

const config = { vocabSize: 300, dModel: 16, layers: 1, heads: 2, context: 64, mlpHidden: 32, valueHead: true, valueDetach: true };
const opt = { lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, gradClip: 1, warmupSteps: 1, valueLrScale: 1 };
const ids = (...xs: number[]) => Int32Array.from(xs);
let seed = 7;
/** Rollout logprobs that differ from the trainer's, some by more than the cap: the folded importance weight matters. */
const lp = (n: number) => Float32Array.from({ length: n }, () => { seed = (seed * 16807) % 2147483647; return -1 - 6 * (seed / 2147483647); });
const node = (id: number, parent: number, kind: TreeNode['kind'], tokens: Int32Array): TreeNode => ({ id, parent, kind, tokens, callIndex: 0, ...(kind === 'generated' ? { logprobs: lp(tokens.length) } : {}) });

/**
 * A tree whose generated node 1 is shared by three branches (a tool result then a reply, a
 * second reply, and the fork through node 5), plus a removed node: datums must train node 1's
 * tokens once, node 6 never, and read both where they are only a prefix.
 */
function tree(rolloutId: string, reward: number): RolloutTree {
  return {
    rolloutId, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward, auxiliaryRoots: [], filterCounts: {},
    nodes: [
      node(0, -1, 'inserted', ids(10, 11, 12, 13)),
      node(1, 0, 'generated', ids(40, 41, 42, 43, 44)),
      node(2, 1, 'inserted', ids(20, 21)),
      node(3, 2, 'generated', ids(50, 51, 52)),
      node(4, 1, 'generated', ids(60, 61)),
      node(5, 0, 'inserted', ids(30)),
      { ...node(6, 5, 'generated', ids(70, 71, 72)), removedBy: 'test' },
      node(7, 6, 'inserted', ids(31)),
      node(8, 7, 'generated', ids(80, 81)),
    ],
  };
}

const trees = [tree('r0', 1), tree('r1', 0), tree('r2', 0.5)];
const fresh = () => { const p = new SharedPolicy(config, cpuKernels(), 3); return { p, t: new EmbeddedTrainer(p, opt) }; };
const batchOf = (advantages: AdvantageResult): TrainerBatch => ({ trees, advantages, loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss });

function maxRelDiff(a: Params, b: Params, skip: RegExp): { diff: number; norm: number } {
  let diff = 0; let norm = 0;
  for (const [name, g] of a) {
    if (skip.test(name)) continue;
    const h = b.get(name)!;
    for (let i = 0; i < g.length; i++) { diff = Math.max(diff, Math.abs(g[i]! - h[i]!)); norm = Math.max(norm, Math.abs(g[i]!)); }
  }
  return { diff, norm };
}

/** The in-process gradient of the tree loss against the one accumulated through datums (forward, fold, forward_backward). */
async function compare(advantages: AdvantageResult, skip: RegExp, server: LossReduction = 'sum', builder: LossReduction = server) {
  const local = fresh();
  const remote = fresh();
  const { grads } = local.t.gradients(batchOf(advantages));
  let captured: Params | undefined;
  const ops = remote.t.datums;
  ops.reduction = server;
  await datumStep({ forward: (d) => ops.forward(d), forwardBackward: (d, l, c) => ops.forwardBackward(d, l, c), optimStep: async () => { captured = ops.takeGradients(); return { gradNorm: 0 }; } }, batchOf(advantages), () => ({ learningRate: 0, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0 }), builder);
  return maxRelDiff(grads, captured!, skip);
}

describe('trees to datums', () => {
  const adv = computeGrpo({ algorithm: 'grpo', options: {}, trees });
  const d = treesToDatums(trees, adv);

  it('trains every kept generated token exactly once, reads shared prefixes in every branch, never trains removed or inserted tokens', () => {
    // Kept generated tokens per tree: 5 + 3 + 2 + 2 (node 6 removed) = 12.
    expect(d.trainedTokens).toBe(3 * 12);
    const r0 = d.datums.slice(0, 3);
    expect(r0.map((x) => Array.from(x.targetTokens))).toEqual([
      [11, 12, 13, 40, 41, 42, 43, 44, 20, 21, 50, 51, 52],
      [11, 12, 13, 40, 41, 42, 43, 44, 60, 61],
      [11, 12, 13, 30, 70, 71, 72, 31, 80, 81],
    ]);
    expect(r0.map((x) => Array.from(x.weights))).toEqual([
      [0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1],
      [0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
      [0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
    ]);
    // Inputs are the branch without its last token: position i predicts target i.
    expect(Array.from(r0[1]!.modelInput)).toEqual([10, 11, 12, 13, 40, 41, 42, 43, 44, 60]);
    // Advantages only where trained; the rollout's logprobs of node 1 line up with its targets.
    r0.forEach((x) => x.weights.forEach((w, i) => { if (!w) expect(x.advantages![i]).toBe(0); }));
    expect(Array.from(r0[0]!.logprobs!.slice(3, 8))).toEqual(Array.from(trees[0]!.nodes[1]!.logprobs!));
  });

  it('folds the truncated importance weight min(π_old/π_rollout, C)/N into the advantage as a plain number', async () => {
    const { t } = fresh();
    const { logprobs: old } = await t.datums.forward(d.datums);
    const { foldImportanceWeight } = await import('@clawgym/core');
    const folded = foldImportanceWeight(d, old, 2);
    let capped = 0;
    folded.forEach((x, k) => x.weights.forEach((w, i) => {
      if (!w) return;
      const rho = Math.exp(old[k]![i]! - d.rolloutLogprobs[k]![i]!);
      if (rho > 2) capped++;
      expect(x.advantages![i]).toBeCloseTo(d.datums[k]!.advantages![i]! * Math.min(rho, 2) / d.trainedTokens, 6);
      expect(x.logprobs![i]).toBe(old[k]![i]);
    }));
    expect(capped).toBeGreaterThan(0);
  });
});

describe('the gradient through datums equals the in-process tree loss', () => {
  describe.each(LOSS_REDUCTIONS)('whatever the server reduces by: %s', (reduction) => {
    it('for GRPO advantages, the advantages undoing the reduction', async () => {
      const { diff, norm } = await compare(computeGrpo({ algorithm: 'grpo', options: {}, trees }), /^$/, reduction);
      expect(norm).toBeGreaterThan(1e-4);
      expect(diff).toBeLessThan(1e-5 + 1e-4 * norm);
    });

    it('differs when the datums are built for another reduction (the test can fail)', async () => {
      const other: LossReduction = reduction === 'sequence_mean' ? 'token_mean' : 'sequence_mean';
      const { diff, norm } = await compare(computeGrpo({ algorithm: 'grpo', options: {}, trees }), /^$/, reduction, other);
      expect(diff).toBeGreaterThan(1e-2 * norm);
    });
  });

  it('for GRPO advantages', async () => {
    const { diff, norm } = await compare(computeGrpo({ algorithm: 'grpo', options: {}, trees }), /^$/);
    expect(norm).toBeGreaterThan(1e-4);
    expect(diff).toBeLessThan(1e-5 + 1e-4 * norm);
  });

  it('for PPO advantages (R − V from the value head); the value loss is not sent through datums, so value.* is left out', async () => {
    const { t } = fresh();
    const values = await t.values(trees);
    const { diff, norm } = await compare(computePpo({ algorithm: 'ppo', options: {}, trees, values }), /^value\./);
    expect(norm).toBeGreaterThan(1e-4);
    expect(diff).toBeLessThan(1e-5 + 1e-4 * norm);
  });

  it('differs when a shared prefix is trained in every branch (the test can fail)', async () => {
    const adv = computeGrpo({ algorithm: 'grpo', options: {}, trees });
    const local = fresh();
    const { grads } = local.t.gradients(batchOf(adv));
    const remote = fresh();
    const d = treesToDatums(trees, adv);
    // Weight 1 on node 1's tokens in the second branch too: counted twice.
    d.datums[1]!.weights.fill(1, 3, 8);
    d.datums[1]!.advantages!.fill(d.datums[0]!.advantages![3]!, 3, 8);
    const { logprobs } = await remote.t.datums.forward(d.datums);
    const { foldImportanceWeight } = await import('@clawgym/core');
    await remote.t.datums.forwardBackward(foldImportanceWeight(d, logprobs, 2), 'ppo', { clipLowThreshold: 0.8, clipHighThreshold: 1.28 });
    const { diff, norm } = maxRelDiff(grads, remote.t.datums.pending!, /^$/);
    expect(diff).toBeGreaterThan(1e-3 * norm);
  });
});
