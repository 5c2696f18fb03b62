import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, oracleOf } from '@clawgym/core';
import { imageSizesTask, solidPng } from './image-task';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('image sizes task', () => {
  it('writes real PNGs and verifies the sizes: oracle passes; swapped dimensions, a missing row and no file fail', async () => {
    const png = solidPng(3, 2, [1, 2, 3]);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([3, 2]);
    const task = imageSizesTask(42);
    const ws = fsWorkspace(tmp('img-'));
    await task.setup(ws);
    expect((await task.verify(ws)).details).toBe('sizes.csv was not written');
    const good = String((await oracleOf(task))![0]!.toolCalls[0]!.arguments.content);
    await ws.writeFile('sizes.csv', good);
    expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
    const lines = good.trim().split('\n');
    const [file, w, h] = lines[1]!.split(',');
    await ws.writeFile('sizes.csv', [lines[0], `${file},${h},${w}`, ...lines.slice(2)].join('\n'));
    expect((await task.verify(ws)).pass).toBe(w === h);
    await ws.writeFile('sizes.csv', lines.slice(0, -1).join('\n'));
    expect((await task.verify(ws)).pass).toBe(false);
    // The images are real: their IHDR sizes match what the oracle wrote.
    for (const name of await ws.list('photos')) {
      const b = await ws.readFile(`photos/${name}`);
      expect(good).toContain(`${name},${b.readUInt32BE(16)},${b.readUInt32BE(20)}`);
    }
  });
});
