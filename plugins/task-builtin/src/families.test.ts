import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, oracleOf, type Task } from '@clawgym/core';
import { createTestKernel, describeTaskSuite, playOracle, suiteOfPlugin } from '@clawgym/core/testing';
import builtin, { WORDS } from './index';
import { SLOW_VERIFY_MS } from './families';

const ALL_FAMILIES = ['write', 'transform', 'several-files', 'csv', 'json', 'shell', 'vocab-write', 'vocab-upper'] as const;

describeTaskSuite('builtin', { suite: suiteOfPlugin(() => builtin({ families: [...ALL_FAMILIES] }), 'builtin'), limit: 24 });

async function suiteTasks(split: 'train' | 'test', limit = 60, options = {}) {
  const kernel = await createTestKernel({ plugins: [builtin(options)] });
  return kernel.registry.get('taskSuite', 'builtin').tasks(split, { seed: 0, limit });
}

describe('built-in task suite', () => {
  const roots: string[] = [];
  afterAll(() => { for (const r of roots) rmSync(r, { recursive: true, force: true }); });

  it('fails near misses: one wrong letter, a missing file, a wrong total, an extra JSON field', async () => {
    const tasks = await suiteTasks('test', 6);
    for (const task of tasks) {
      const root = mkdtempSync(join(tmpdir(), 'builtin-miss-'));
      roots.push(root);
      const ws = fsWorkspace(root);
      await task.setup(ws);
      await playOracle((await oracleOf(task)) ?? [], root);
      // Corrupt the last file the oracle wrote (or the shell's output).
      const calls = (await oracleOf(task))!.flatMap((t) => t.toolCalls);
      const last = calls.filter((c) => c.name === 'write_file').at(-1)?.arguments.path as string | undefined ?? 'count.txt';
      const text = (await ws.readFile(last)).toString();
      const corrupted = last.endsWith('.json') ? text.replace(/}\s*$/, ',"extra":1}') : `${text.slice(0, -1)}${text.at(-1) === '9' ? '8' : '9'}`;
      await ws.writeFile(last, corrupted);
      expect({ id: task.id, pass: (await task.verify(ws)).pass }).toEqual({ id: task.id, pass: false });
    }
  });

  it('has disjoint, reproducible splits, graded difficulty and a family filter', async () => {
    // Same instructions recur with different data; tasks are told apart by id (seed and index).
    const train = (await suiteTasks('train')).map((t) => t.id);
    const test = (await suiteTasks('test')).map((t) => t.id);
    expect((await suiteTasks('train')).map((t) => t.id)).toEqual(train);
    expect(test.filter((i) => train.includes(i))).toEqual([]);
    expect(new Set((await suiteTasks('test', 12)).map((t) => t.difficulty))).toEqual(new Set([1, 2, 3]));
    expect(new Set((await suiteTasks('test', 10, { families: ['write'] })).map((t) => t.category))).toEqual(new Set(['write']));
    // The config slot's options reach the suite too: tasks: [{ use: 'builtin', options: { families } }].
    const kernel = await createTestKernel({ plugins: [builtin()] });
    const slotTasks = await kernel.registry.get('taskSuite', 'builtin').tasks('test', { seed: 0, limit: 10, options: { families: ['csv', 'json'] } });
    expect(new Set(slotTasks.map((t) => t.category))).toEqual(new Set(['csv', 'json']));
    await expect(kernel.registry.get('taskSuite', 'builtin').tasks('test', { seed: 0, options: { familes: [] } })).rejects.toThrow('Did you mean "families"?');
  });

  it('copy-friendly families: closed vocabulary, and held-out word combinations never trained on', async () => {
    expect(new Set(WORDS).size).toBe(32);
    expect(WORDS.every((w) => /^[a-z]{3}$/.test(w))).toBe(true);
    const families = { families: ['vocab-write', 'vocab-upper'] };
    const pairs = (tasks: Task[]) => tasks.map((t) => /(?:Create|Read) (\w+)\.txt \D*?(?:containing |to )(\w+)/.exec(t.instruction)!.slice(1).join('>'));
    const train = new Set(pairs(await suiteTasks('train', 1000, families)));
    const test = pairs(await suiteTasks('test', 200, families));
    expect(test.filter((p) => train.has(p))).toEqual([]);
    expect(new Set(test).size).toBeGreaterThan(60);
    expect(new Set((await suiteTasks('test', 10, families)).map((t) => t.category))).toEqual(new Set(['vocab-write', 'vocab-upper']));
    // Without a families option the suite keeps its open-vocabulary families.
    expect((await suiteTasks('test', 12)).some((t) => t.category.startsWith('vocab'))).toBe(false);
  });

  it('vocab-upper-slow: vocab-upper\'s task with a verifier that takes SLOW_VERIFY_MS, for long and short tasks of equal difficulty', async () => {
    const tasks = await suiteTasks('test', 4, { families: ['vocab-upper', 'vocab-upper-slow'] });
    const [fast, slow] = [tasks[0]!, tasks[1]!];
    expect([fast.category, slow.category]).toEqual(['vocab-upper', 'vocab-upper-slow']);
    // The same kind of task for the model: one sentence shape, one file in, one word out, two oracle turns.
    expect(slow.instruction.replace(/\b[a-z]{3}\b/g, 'w')).toBe(fast.instruction.replace(/\b[a-z]{3}\b/g, 'w'));
    expect(slow.difficulty).toBe(fast.difficulty);
    expect((slow.oracle as unknown[]).length).toBe((fast.oracle as unknown[]).length);
    const root = mkdtempSync(join(tmpdir(), 'builtin-'));
    roots.push(root);
    const ws = fsWorkspace(root);
    await slow.setup(ws);
    await playOracle((await oracleOf(slow)) ?? [], root);
    const started = Date.now();
    expect(await slow.verify(ws)).toMatchObject({ pass: true, reward: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SLOW_VERIFY_MS - 50);
  }, 30_000);
});
