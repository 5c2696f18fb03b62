import fc from 'fast-check';
import type { ModelCallRecord } from '../contracts/records';
import type { RolloutTree } from '../contracts/tree';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { simulateRollout, type HarnessOp } from '../testing/simulated-harness';
import { buildTree } from './builder';
import { applyFilters } from './filters';
import { packTree, flattenBranches } from './pack';
import { auxiliaryNodeIds, trainableNodes } from './trainable';

const { tokenizer } = byteChatMl();
const messageEndId = tokenizer.special('<|im_end|>');
const info = { rolloutId: 'sim', taskId: 't', category: 'c', harness: 'h', outcome: 'ok' as const, reward: 1 };

function build(records: ModelCallRecord[], maxBranches = 64): RolloutTree {
  return applyFilters(buildTree(records, info, { messageEndId }), { dropDeadLeaves: true, excludeAuxiliary: true, maxBranches });
}

/** Tokens of the path from a root to `id` (inclusive). */
function pathTokens(tree: RolloutTree, id: number): number[] {
  const parts: number[][] = [];
  for (let n = id; n >= 0; n = tree.nodes[n]!.parent) parts.push(Array.from(tree.nodes[n]!.tokens));
  return parts.reverse().flat();
}

const sequenceOf = (r: ModelCallRecord) => [...Array.from(r.promptIds), ...r.outputIds].join(',');
const generatedTotal = (t: RolloutTree) => t.nodes.reduce((n, x) => n + (x.kind === 'generated' ? x.tokens.length : 0), 0);

const ops = fc.array(fc.constantFrom<HarnessOp>('step', 'step', 'step', 'retry', 'fail', 'rewrite', 'subagent', 'compaction'), { minLength: 1, maxLength: 14 });

describe('prefix tree over random harness behaviour (property tests)', () => {
  it('keeps every answered call as a path, trains each generated token once, never trains auxiliary tokens, and its counts add up', () => {
    fc.assert(fc.property(ops, fc.integer({ min: 0, max: 1e6 }), (opList, seed) => {
      const records = simulateRollout(opList, seed);
      const tree = build(records);
      const answered = records.filter((r) => r.finishReason !== 'error');
      const sequences = new Set(answered.map(sequenceOf));
      const kids = new Map<number, number>();
      for (const n of tree.nodes) if (n.parent >= 0) kids.set(n.parent, (kids.get(n.parent) ?? 0) + 1);

      // Every root-to-leaf path is exactly some answered call's prompt + output.
      for (const n of tree.nodes) if (!kids.has(n.id)) expect(sequences.has(pathTokens(tree, n.id).join(','))).toBe(true);
      // Every answered call is a path in the tree (nothing lost).
      const paths = new Set(tree.nodes.map((n) => pathTokens(tree, n.id).join(',')));
      for (const s of sequences) expect(paths.has(s) || [...paths].some((p) => p.startsWith(`${s},`))).toBe(true);

      // No auxiliary token is in the loss.
      const aux = auxiliaryNodeIds(tree);
      const trained = trainableNodes(tree);
      expect(trained.filter((n) => aux.has(n.id))).toEqual([]);
      // Side calls (subagents, compaction summaries) never land in the main tree.
      for (const n of tree.nodes) if (answered.find((r) => r.callIndex === n.callIndex)?.role === 'side') expect(aux.has(n.id)).toBe(true);

      // Filter counts add up.
      const kept = trained.reduce((s, n) => s + n.tokens.length, 0);
      const c = tree.filterCounts;
      expect((tree.dropped ? c['dropped-tokens']! : kept) + (c['dead-leaf'] ?? 0) + (c.auxiliary ?? 0)).toBe(generatedTotal(tree));
      expect(c['failed-call']).toBe(records.length - answered.length);

      // Packed, every trained token appears once; flattened, shared tokens are masked in all but one branch.
      const advantages = new Map([[tree.rolloutId, new Map(trained.map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))]]);
      const packed = packTree(tree, { algorithm: 'x', advantages, metrics: {} });
      expect(packed.lossMask.reduce((s, x) => s + x, 0)).toBe(kept);
      const branches = flattenBranches(packed);
      expect(branches.reduce((s, b) => s + b.lossMask.reduce((x, y) => x + y, 0), 0)).toBe(kept);
      for (const b of branches) expect(sequences.has(Array.from(b.tokens).join(',')) || [...sequences].some((s) => s.startsWith(Array.from(b.tokens).join(',')))).toBe(true);
    }), { numRuns: 150 });
  });

  it('is linear in calls that reuse their parent: one main path, no forks', () => {
    const records = simulateRollout(Array(20).fill('step'), 7);
    expect(records.slice(1).every((r) => r.origin.kind === 'reuse')).toBe(true);
    const tree = build(records);
    expect(tree.nodes.filter((n) => n.parent === -1)).toHaveLength(1);
    expect(tree.nodes.every((n, i) => n.parent === i - 1)).toBe(true);
    expect(tree.nodes.filter((n) => n.kind === 'generated')).toHaveLength(20);
  });

  it('drops the dead leaf of a retry and keeps the branch that continued', () => {
    const records = simulateRollout(['step', 'retry', 'step'], 3);
    const tree = build(records);
    const dead = tree.nodes.filter((n) => n.removedBy === 'dead-leaf');
    expect(dead.map((n) => n.callIndex)).toEqual([1]);
    expect(tree.filterCounts['dead-leaf']).toBe(records[1]!.outputIds.length - sharedPrefix(records[1]!.outputIds, records[2]!.outputIds));
  });

  it('roots subagents and compaction summaries in auxiliary trees', () => {
    const records = simulateRollout(['step', 'subagent', 'step', 'compaction', 'step'], 11);
    const tree = build(records);
    expect(tree.auxiliaryRoots).toHaveLength(2);
    expect(tree.filterCounts.auxiliary).toBeGreaterThan(0);
  });

  it('drops a rollout with more leaves than maxBranches, and infra failures', () => {
    // Branches the harness continued (two calls each) before rewriting its history are real branches.
    const records = simulateRollout(['step', 'step', 'rewrite', 'step', 'rewrite', 'step', 'rewrite', 'step'], 5);
    expect(build(records, 8).dropped).toBeUndefined();
    const dropped = build(records, 2);
    expect(dropped.dropped).toMatch(/^over-branching: [3-9] leaves > maxBranches 2$/);
    expect(dropped.filterCounts['over-branching']).toBe(1);
    expect(trainableNodes(dropped)).toEqual([]);
    const infra = applyFilters(buildTree(records, { ...info, outcome: 'infra-error' }, { messageEndId }), { dropDeadLeaves: true, excludeAuxiliary: true, maxBranches: 8 });
    expect(infra.dropped).toMatch(/^infrastructure failure/);
    expect(trainableNodes(infra)).toEqual([]);
  });
});

function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
