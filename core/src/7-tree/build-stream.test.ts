import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelCallRecord } from '../contracts/records';
import type { RolloutTree } from '../contracts/tree';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { CallStore } from '../5-records/call-store';
import { simulateRollout, type HarnessOp } from '../testing/simulated-harness';
import { buildTreeFromStream } from './build-stream';
import { buildTree } from './builder';

const messageEndId = byteChatMl().tokenizer.special('<|im_end|>');
const info = { rolloutId: 'sim', taskId: 't', category: 'c', harness: 'h', outcome: 'ok' as const, reward: 1 };
const ops = fc.array(fc.constantFrom<HarnessOp>('step', 'step', 'step', 'retry', 'fail', 'rewrite', 'subagent', 'compaction'), { minLength: 1, maxLength: 14 });

/** A tree as plain data: the streamed and listed builds must agree node for node. */
const plain = (t: RolloutTree) => ({ ...t, nodes: t.nodes.map((n) => ({ ...n, tokens: Array.from(n.tokens), logprobs: n.logprobs && Array.from(n.logprobs) })) });

async function* each<T>(items: readonly T[]): AsyncGenerator<T> { yield* items; }

describe('buildTreeFromStream', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('builds the tree buildTree builds, from records in the order calls finished (neighbours swapped)', async () => {
    await fc.assert(fc.asyncProperty(ops, fc.integer({ min: 0, max: 1e6 }), fc.array(fc.boolean(), { maxLength: 14 }), async (opList, seed, swaps) => {
      const records = simulateRollout(opList, seed);
      const finished = [...records];
      swaps.forEach((swap, i) => { if (swap && i + 1 < finished.length) [finished[i], finished[i + 1]] = [finished[i + 1]!, finished[i]!]; });
      const streamed = await buildTreeFromStream(finished, each(finished), info, { messageEndId });
      expect(plain(streamed)).toEqual(plain(buildTree(records, info, { messageEndId })));
    }), { numRuns: 60 });
  });

  it('builds the same tree from a record file, its prompt ids copied out of the records it read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tree-stream-'));
    dirs.push(dir);
    const store = new CallStore(dir);
    const records: ModelCallRecord[] = simulateRollout(['step', 'step', 'rewrite', 'step', 'subagent', 'retry', 'step', 'compaction', 'step'], 7)
      .map((r) => ({ ...r, rolloutId: 'file' }));
    for (const r of records) await store.append(r);
    await store.close('file');
    const heads = [];
    for await (const h of store.heads('file')) heads.push(h);
    const tree = await buildTreeFromStream(heads, store.stream('file'), info, { messageEndId });
    expect(plain(tree)).toEqual(plain(buildTree(records, info, { messageEndId })));
    // The arrays the tree keeps alive hold little more than its own ids: no whole prompt a call.
    const held = new Set(tree.nodes.map((n) => n.tokens.buffer));
    const heldBytes = [...held].reduce((n, b) => n + b.byteLength, 0);
    const treeBytes = tree.nodes.reduce((n, x) => n + x.tokens.byteLength, 0);
    expect(heldBytes).toBeLessThan(2 * treeBytes);
    // Built from records that each own their whole prompt, the views keep every prompt alive.
    const viewed = buildTree(records, info, { messageEndId });
    expect([...new Set(viewed.nodes.map((n) => n.tokens.buffer))].reduce((n, b) => n + b.byteLength, 0)).toBeGreaterThan(2 * treeBytes);
  });
});
