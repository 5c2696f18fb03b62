import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, type Task } from '@clawgym/core';
import { createTestKernel, describeTaskSuite, suiteOfPlugin } from '@clawgym/core/testing';
import jobbench, { parseCsv } from './index';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const workspace = () => fsWorkspace(tmp('jobbench-'));

describeTaskSuite('jobbench', { suite: suiteOfPlugin(() => jobbench(), 'jobbench'), limit: 8 });

async function prepared(task: Task) {
  const ws = workspace();
  await task.setup(ws);
  return ws;
}

async function suite() {
  const kernel = await createTestKernel({ plugins: [jobbench()] });
  return kernel.registry.get('taskSuite', 'jobbench');
}

describe('jobbench suite', () => {
  it('generates disjoint, reproducible train and test splits', async () => {
    const s = await suite();
    const train = (await s.tasks('train', { seed: 0, limit: 20 })).map((t) => t.id);
    const again = (await s.tasks('train', { seed: 0, limit: 20 })).map((t) => t.id);
    const test = (await s.tasks('test', { seed: 0, limit: 20 })).map((t) => t.id);
    expect(again).toEqual(train);
    expect(test.filter((id) => train.includes(id))).toEqual([]);
  });

  it('expenses: passes the right totals, fails a wrong total and a missing department', async () => {
    const [task] = await (await suite()).tasks('test', { seed: 3, limit: 1 });
    expect(task!.category).toBe('spreadsheet');
    const ws = await prepared(task!);
    const rows = parseCsv((await ws.readFile('expenses.csv')).toString());
    const totals = new Map<string, number>();
    for (const r of rows) totals.set(r.department!, (totals.get(r.department!) ?? 0) + Number(r.amount));
    const sorted = [...totals].sort(([a], [b]) => a.localeCompare(b));
    const write = (lines: [string, number][]) => ws.writeFile('summary.csv', `department,total\n${lines.map(([d, t]) => `${d},${t.toFixed(2)}`).join('\n')}\n`);

    expect((await task!.verify(ws)).details).toBe('summary.csv was not written');
    await write(sorted);
    expect(await task!.verify(ws)).toMatchObject({ pass: true, reward: 1 });
    await write(sorted.map(([d, t], i) => [d, i === 0 ? t + 0.01 : t]));
    expect(await task!.verify(ws)).toMatchObject({ pass: false, reward: 0 });
    await write(sorted.slice(1));
    expect((await task!.verify(ws)).pass).toBe(false);
  });

  it('headcount: passes exact counts, fails an off-by-one and invalid JSON', async () => {
    const [, task] = await (await suite()).tasks('test', { seed: 5, limit: 2 });
    const ws = await prepared(task!);
    const year = Number(/before (\d{4})/.exec(task!.instruction)![1]);
    const want: Record<string, number> = {};
    for (const r of parseCsv((await ws.readFile('employees.csv')).toString())) {
      if (Number(r.start_year) < year) want[r.team!] = (want[r.team!] ?? 0) + 1;
    }
    await ws.writeFile('headcount.json', JSON.stringify(want));
    expect((await task!.verify(ws)).pass).toBe(true);
    const team = Object.keys(want)[0]!;
    await ws.writeFile('headcount.json', JSON.stringify({ ...want, [team]: want[team]! + 1 }));
    expect((await task!.verify(ws)).details).toContain(`team ${team}`);
    await ws.writeFile('headcount.json', '{oops');
    expect((await task!.verify(ws)).details).toBe('headcount.json is not valid JSON');
  });
});
