import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace } from '@clawgym/core';
import { createTestKernel, describeTaskSuite, suiteOfPlugin } from '@clawgym/core/testing';
import officeqa from './index';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describeTaskSuite('officeqa', { suite: suiteOfPlugin(() => officeqa(), 'officeqa'), limit: 8 });

describe('officeqa generated report questions', () => {
  it('hides the answer in one report of the corpus and verifies the tagged answer', async () => {
    const kernel = await createTestKernel({ plugins: [officeqa()] });
    const tasks = await kernel.registry.get('taskSuite', 'officeqa').tasks('test', { seed: 1, limit: 6 });
    for (const task of tasks) {
      const ws = fsWorkspace(tmp('officeqa-'));
      await task.setup(ws);
      const files = await ws.list('corpus');
      expect(files).toHaveLength(4);
      const year = /fiscal (\d{4})/.exec(task.instruction)![1];
      const report = (await ws.readFile(`corpus/${files.find((f) => f.includes(year!))!}`)).toString();
      const gold = task.category === 'percentage'
        ? /Operating margin was ([\d.]+%)/.exec(report)![1]!
        : `${/\$([\d.]+) million/.exec(report)![1]} million`;
      expect((await task.verify(ws)).details).toBe('answer.txt was not written');
      await ws.writeFile('answer.txt', `I think it is ${gold}`);
      expect((await task.verify(ws)).details).toBe('no <FINAL_ANSWER> tags in answer.txt');
      await ws.writeFile('answer.txt', `<FINAL_ANSWER>${gold}</FINAL_ANSWER>`);
      expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
      const wrong = task.category === 'percentage' ? `${(parseFloat(gold) + 1).toFixed(1)}%` : `${(parseFloat(gold) * 1.05).toFixed(1)} million`;
      await ws.writeFile('answer.txt', `<FINAL_ANSWER>${wrong}</FINAL_ANSWER>`);
      expect((await task.verify(ws)).pass).toBe(false);
    }
  });
});
