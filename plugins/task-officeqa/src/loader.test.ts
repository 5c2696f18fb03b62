import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, type Task } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import officeqa, { loadOfficeQa, officeqaDir, parseCsvRecords, parseSourceFiles } from './index';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const DIR = join(__dirname, '__fixtures__', 'officeqa');
const SOURCE = { csv: join(DIR, 'officeqa.csv'), corpus: join(DIR, 'corpus') };

async function prepared(task: Task) {
  const ws = fsWorkspace(tmp('officeqa-loader-'));
  await task.setup(ws);
  return ws;
}

describe('OfficeQA CSV', () => {
  it('parses quoted fields with commas, doubled quotes and line breaks', () => {
    const rows = parseCsvRecords('\uFEFFa,b\r\n"x, y","say ""hi""\nthere"\r\n\r\nplain,\n');
    expect(rows).toEqual([{ a: 'x, y', b: 'say "hi"\nthere' }, { a: 'plain', b: '' }]);
  });
  it('reads source_files lists in their several spellings', () => {
    expect(parseSourceFiles('a.txt\nb.txt')).toEqual(['a.txt', 'b.txt']);
    expect(parseSourceFiles('a.txt, b.txt;c.txt')).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(parseSourceFiles('["x/a.txt", "b.txt"]')).toEqual(['x/a.txt', 'b.txt']);
  });
});

describe('OfficeQA loader', () => {
  it('makes one task per row, with only its listed sources under corpus/', async () => {
    const tasks = await loadOfficeQa(SOURCE);
    expect(tasks.map((t) => [t.id, t.category])).toEqual([['officeqa/UID0001', 'easy'], ['officeqa/UID0002', 'hard'], ['officeqa/UID0003', 'easy']]);
    expect(tasks[1]!.instruction).toContain('Use the January 1941 and January 1942 bulletins');
    expect(tasks[1]!.instruction).toContain('<FINAL_ANSWER></FINAL_ANSWER>');
    const ws = await prepared(tasks[1]!);
    expect(await ws.list()).toEqual(['corpus']);
    expect(await ws.list('corpus')).toEqual(['treasury_bulletin_1941_01.txt', 'treasury_bulletin_1942_01.txt']);
    expect((await ws.readFile('corpus/treasury_bulletin_1942_01.txt')).toString()).toContain('1941          7,320');
    expect(await ws.list('corpus')).not.toContain('treasury_bulletin_1999_12.txt');
    expect(await (await prepared(tasks[2]!)).list('corpus')).toEqual(['treasury_bulletin_2024_09.txt']);
  });

  it('verifies with the <FINAL_ANSWER> matching: numbers with scale and tolerance, percent, text', async () => {
    const [amount, percent, text] = await loadOfficeQa(SOURCE);
    const ws = await prepared(amount!);
    expect((await amount!.verify(ws)).details).toBe('answer.txt was not written');
    await ws.writeFile('answer.txt', 'Receipts were $5,387 million.');
    expect((await amount!.verify(ws)).details).toBe('no <FINAL_ANSWER> tags in answer.txt');
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>$5.387 billion</FINAL_ANSWER>');
    expect(await amount!.verify(ws)).toMatchObject({ pass: true, reward: 1, details: 'answered "$5.387 billion", expected "5387 million"' });
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>5,103 million</FINAL_ANSWER>');
    expect(await amount!.verify(ws)).toMatchObject({ pass: false, reward: 0 });

    await ws.writeFile('answer.txt', '<FINAL_ANSWER>35.9%</FINAL_ANSWER>');
    expect((await percent!.verify(ws)).pass).toBe(true);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>35.9</FINAL_ANSWER>');
    expect((await percent!.verify(ws)).pass).toBe(false);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>The Bureau of the Fiscal Service.</FINAL_ANSWER>');
    expect((await text!.verify(ws)).pass).toBe(true);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER></FINAL_ANSWER>');
    expect((await text!.verify(ws)).details).toBe('the <FINAL_ANSWER> in answer.txt is empty');
  });

  it('fails clearly on missing source files and missing columns', async () => {
    const dir = tmp('officeqa-bad-');
    writeFileSync(join(dir, 'q.csv'), 'uid,question,answer,source_docs,source_files,difficulty\nU1,Q?,1,,nowhere.txt,easy\n');
    await expect(loadOfficeQa({ csv: join(dir, 'q.csv'), corpus: SOURCE.corpus })).rejects.toMatchObject({
      code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining('U1: nowhere.txt'),
    });
    writeFileSync(join(dir, 'q.csv'), 'id,question\nU1,Q?\n');
    await expect(loadOfficeQa({ csv: join(dir, 'q.csv'), corpus: SOURCE.corpus })).rejects.toThrow('missing column(s) uid, answer, source_files');
  });

  it('splits by a uid list or by hashing the uid, disjointly, and registers datasets', async () => {
    const listed = officeqaDir({ ...SOURCE, testUids: ['UID0002'] });
    expect((await listed.tasks('test', { seed: 0 })).map((t) => t.id)).toEqual(['officeqa/UID0002']);
    expect((await listed.tasks('train', { seed: 0 })).map((t) => t.id).sort()).toEqual(['officeqa/UID0001', 'officeqa/UID0003']);
    const hashed = officeqaDir({ ...SOURCE, testFraction: 0.5 });
    const train = (await hashed.tasks('train', { seed: 3 })).map((t) => t.id);
    const test = (await hashed.tasks('test', { seed: 3 })).map((t) => t.id);
    expect([...train, ...test].sort()).toEqual(['officeqa/UID0001', 'officeqa/UID0002', 'officeqa/UID0003']);
    expect((await hashed.tasks('train', { seed: 9 })).map((t) => t.id).sort()).toEqual([...train].sort());
    expect(await hashed.tasks('train', { seed: 3, limit: 1 })).toHaveLength(Math.min(1, train.length));

    const kernel = await createTestKernel({ plugins: [officeqa({ datasets: [SOURCE] })] });
    expect(kernel.registry.get('taskSuite', 'officeqa:officeqa').name).toBe('officeqa:officeqa');
    expect(kernel.registry.get('taskSuite', 'officeqa').name).toBe('officeqa');
  });
});
