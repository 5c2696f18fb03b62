import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { definePlugin } from '../kernel/plugin';
import { CallStore } from '../5-records/call-store';
import { createTestKernel } from '../testing';
import { simulateRollout } from '../testing/simulated-harness';
import { buildTree } from '../7-tree/builder';
import { buildStepTrees } from '../7-tree/step-trees';
import { computeStepAdvantages } from './step-advantages';
import { trainableNodes } from '../7-tree/trainable';

const messageEndId = byteChatMl().tokenizer.special('<|im_end|>');
const info = (rolloutId: string, harness: string, reward: number) => ({ rolloutId, taskId: 'task-1', category: 'files', harness, outcome: 'ok' as const, reward });

/** A third-party algorithm, written outside core: every token's advantage is the reward. */
const rewardAsAdvantage = definePlugin({
  name: 'acme:reward-as-advantage',
  options: z.strictObject({ scale: z.number().default(1) }),
  apply(api, { scale }) {
    api.provide.algorithm({
      name: 'raw-reward', needsValues: false,
      computeAdvantages: (input) => ({
        algorithm: 'raw-reward',
        advantages: new Map(input.trees.map((t) => [t.rolloutId, new Map(trainableNodes(t).map((n) => [n.id, new Float32Array(n.tokens.length).fill(t.reward * scale)]))])),
        metrics: { trees: input.trees.length },
      }),
    });
  },
});

describe('step pipeline: filters, onTreeBuilt, the algorithm, computeAdvantage', () => {
  it('uses a third algorithm registered from outside, through the registry', async () => {
    const kernel = await createTestKernel({ plugins: [rewardAsAdvantage({ scale: 2 })], config: { algorithm: 'raw-reward' } });
    const trees = await buildStepTrees(kernel, [{ records: simulateRollout(['step', 'step'], 1), info: info('r1', 'agentloop', 0.5) }], messageEndId);
    const result = await computeStepAdvantages(kernel, trees);
    expect(result.algorithm).toBe('raw-reward');
    expect([...result.advantages.get('r1')!.values()].every((a) => a.every((x) => x === 1))).toBe(true);
  });

  it('lets an onTreeBuilt tap reshape trees after the built-in filters', async () => {
    const kernel = await createTestKernel({
      plugins: [rewardAsAdvantage(), { name: 'acme:shaping', apply: (api) => api.hooks.onTreeBuilt.tap(undefined, (t) => ({ ...t, reward: t.reward - 0.25, filterCounts: { ...t.filterCounts, shaped: 1 } })) }],
      config: { algorithm: 'raw-reward' },
    });
    const [tree] = await buildStepTrees(kernel, [{ records: simulateRollout(['step', 'retry', 'step'], 2), info: info('r1', 'agentloop', 1) }], messageEndId);
    expect(tree!.reward).toBe(0.75);
    expect(tree!.filterCounts).toMatchObject({ shaped: 1, 'dead-leaf': expect.any(Number), auxiliary: 0 });
    expect(tree!.filterCounts['dead-leaf']).toBeGreaterThan(0);
    // The built-in filters are core's own tap, first: plugins' taps see filtered trees.
    expect(kernel.hooks.onTreeBuilt.taps.map((t) => t.name)).toEqual(['clawgym:core', 'acme:shaping']);
  });

  it('filters by the config: the built-in tap reads the tree section (dead leaves kept when asked)', async () => {
    const treeOf = async (tree?: Record<string, unknown>) => (await buildStepTrees(await createTestKernel({ config: tree ? { tree } : {} }), [{ records: simulateRollout(['step', 'retry', 'step'], 2), info: info('r1', 'agentloop', 1) }], messageEndId))[0]!;
    const dropped = await treeOf();
    expect(dropped.filterCounts['dead-leaf']).toBeGreaterThan(0);
    expect(dropped.nodes.some((n) => n.removedBy !== undefined)).toBe(true);
    const kept = await treeOf({ dropDeadLeaves: false });
    expect(kept.filterCounts['dead-leaf']).toBe(0);
    expect(kept.nodes.some((n) => n.removedBy !== undefined)).toBe(false);
  });

  it('dispatches to the selected algorithm only, then lets computeAdvantage taps reshape its result', async () => {
    const called: string[] = [];
    const algo = (name: string) => ({ name, needsValues: false, computeAdvantages: () => { called.push(name); return { algorithm: name, advantages: new Map(), metrics: {} }; } });
    const kernel = await createTestKernel({
      plugins: [
        { name: 'acme:two', apply: (api) => { api.provide.algorithm(algo('a')); api.provide.algorithm(algo('b')); } },
        { name: 'acme:clip', apply: (api) => api.hooks.computeAdvantage.tap(undefined, (result, input) => ({ ...result, metrics: { ...result.metrics, clipped: input.trees.length + 1 } })) },
      ],
      config: { algorithm: 'b' },
    });
    const result = await computeStepAdvantages(kernel, []);
    expect(called).toEqual(['b']);
    expect(result).toMatchObject({ algorithm: 'b', metrics: { clipped: 1 } });
  });

  it('names what is registered when the selected algorithm is not', async () => {
    const kernel = await createTestKernel({ plugins: [rewardAsAdvantage()], config: { algorithm: 'nope' } });
    await expect(computeStepAdvantages(kernel, [])).rejects.toMatchObject({ code: 'CLAWGYM_PLUGIN_NOT_FOUND' });
  });
});

describe('trees of calls recorded from the real harness CLIs (fixtures)', () => {
  const dir = join(__dirname, '..', '7-tree', '__fixtures__', 'harness-calls');
  const harnesses = readdirSync(dir).map((f) => f.replace(/\.jsonl$/, ''));

  it.each(harnesses)('%s: one main path, every call trained, the shared prefix counted once', async (harness) => {
    const records = await new CallStore(dir).read(harness);
    expect(records.length).toBeGreaterThanOrEqual(2);
    const tree = buildTree(records, info(harness, harness, 1), { messageEndId });
    expect(tree.nodes.map((n) => n.kind)).toEqual(records.flatMap(() => ['inserted', 'generated']));
    expect(tree.nodes.map((n) => n.callIndex)).toEqual(records.flatMap((r) => [r.callIndex, r.callIndex]));
    expect(tree.nodes.every((n, i) => n.parent === i - 1)).toBe(true);
    expect(tree.auxiliaryRoots).toEqual([]);
    const perCall = records.reduce((n, r) => n + r.promptIds.length + r.outputIds.length, 0);
    const unique = tree.nodes.reduce((n, x) => n + x.tokens.length, 0);
    const last = records.at(-1)!;
    expect(unique).toBe(last.promptIds.length + last.outputIds.length);
    expect(perCall / unique).toBeGreaterThan(1.9);
  });
});
