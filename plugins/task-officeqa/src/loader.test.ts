import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, type Task } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import officeqa, { loadOfficeQa, loadOfficeQaReport, officeqaDir, parseCsvRecords, parseSourceFiles } from './index';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const DIR = join(__dirname, '__fixtures__', 'officeqa');
const SOURCE = { csv: join(DIR, 'officeqa.csv'), corpus: join(DIR, 'corpus') };
const HEADER = 'uid,question,answer,source_docs,source_files,difficulty';
const GOOD = (uid: string, answer = '5387 million') => `${uid},Receipts in 1940?,${answer},,treasury_bulletin_1941_01.txt,easy`;

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
    expect(await amount!.verify(ws)).toMatchObject({ pass: true, reward: 1, details: 'answered "$5.387 billion", expected "5387 million": same number' });
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>5,103 million</FINAL_ANSWER>');
    expect(await amount!.verify(ws)).toMatchObject({ pass: false, reward: 0 });

    await ws.writeFile('answer.txt', '<FINAL_ANSWER>35.9%</FINAL_ANSWER>');
    expect((await percent!.verify(ws)).pass).toBe(true);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>35.9</FINAL_ANSWER>');
    expect((await percent!.verify(ws)).pass).toBe(true);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>35.8%</FINAL_ANSWER>');
    expect((await percent!.verify(ws)).pass).toBe(false);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER>The Bureau of the Fiscal Service.</FINAL_ANSWER>');
    expect((await text!.verify(ws)).pass).toBe(true);
    await ws.writeFile('answer.txt', '<FINAL_ANSWER></FINAL_ANSWER>');
    expect((await text!.verify(ws)).details).toBe('the <FINAL_ANSWER> in answer.txt is empty');
  });

  it('fails clearly on missing source files and missing columns', async () => {
    const dir = tmp('officeqa-bad-');
    writeFileSync(join(dir, 'q.csv'), `${HEADER}\nU1,Q?,1,,nowhere.txt,easy\n`);
    await expect(loadOfficeQa({ csv: join(dir, 'q.csv'), corpus: SOURCE.corpus })).rejects.toMatchObject({
      code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining('q.csv:2 (row 1, column source_files) [uid U1]: source file(s) nowhere.txt are not in the corpus folder'),
    });
    writeFileSync(join(dir, 'q.csv'), 'id,question\nU1,Q?\n');
    await expect(loadOfficeQa({ csv: join(dir, 'q.csv'), corpus: SOURCE.corpus })).rejects.toThrow('missing column(s) uid, answer, source_files (the header has id, question)');
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

describe('OfficeQA loader errors: what is wrong, where; the good rows still load', () => {
  const load = (text: string, strict = false) => {
    const dir = tmp('officeqa-rows-');
    writeFileSync(join(dir, 'q.csv'), text);
    const warnings: string[] = [];
    return { csv: join(dir, 'q.csv'), warnings, tasks: loadOfficeQa({ csv: join(dir, 'q.csv'), corpus: SOURCE.corpus, strict }, (m) => warnings.push(m)) };
  };

  it('an unclosed quote is reported at its line and column, not as missing source files, and the rows after it load', async () => {
    const { csv, tasks } = load(`${HEADER}\n${GOOD('U1')}\nU2,"What were receipts?,5387 million,,treasury_bulletin_1941_01.txt,easy\n${GOOD('U3')}\n`);
    const report = await loadOfficeQaReport({ csv, corpus: SOURCE.corpus });
    expect(report.tasks.map((t) => t.id)).toEqual(['officeqa/U1', 'officeqa/U3']);
    expect(report.problems).toEqual([{ where: `${csv}:3 (row 2, column question)`, message: 'a quoted field opened here is never closed: expected a closing " before the end of the file' }]);
    expect((await tasks).map((t) => t.id)).toEqual(['officeqa/U1', 'officeqa/U3']);
    expect(JSON.stringify(report.problems)).not.toContain('corpus');
  });

  it('a row with two fields is refused with its line and what was expected', async () => {
    const { csv, warnings, tasks } = load(`${HEADER}\n${GOOD('U1')}\nU2,What?\n`);
    expect((await tasks).map((t) => t.id)).toEqual(['officeqa/U1']);
    expect(warnings).toEqual([`q.csv: loaded 1 question(s), left out 1:\n${csv}:3 (row 2) [uid U2]: the row has 2 fields, the header has 6 (uid, question, answer, source_docs, source_files, difficulty): a missing or extra comma, or a field with a comma that is not quoted`]);
  });

  it('an empty answer is refused with the row and the column', async () => {
    const { csv, warnings, tasks } = load(`${HEADER}\n${GOOD('U1', '  ')}\n${GOOD('U2')}\n`);
    expect((await tasks).map((t) => t.id)).toEqual(['officeqa/U2']);
    expect(warnings[0]).toContain(`${csv}:2 (row 1, column answer) [uid U1]: the answer is empty: expected the gold answer`);
  });

  it('text after a closing quote and a duplicate uid are refused', async () => {
    const { csv } = load(`${HEADER}\nU1,"Q?"x,1,,treasury_bulletin_1941_01.txt,easy\n${GOOD('U2')}\n${GOOD('U2')}\n`);
    const report = await loadOfficeQaReport({ csv, corpus: SOURCE.corpus });
    expect(report.tasks.map((t) => t.id)).toEqual(['officeqa/U2']);
    expect(report.problems.map((p) => [p.where, p.message])).toEqual([
      [`${csv}:2 (row 1, column question)`, 'text after a closing quote: expected a comma or the end of the line, found "x"'],
      [`${csv}:4 (row 3, column uid)`, 'uid U2 appears twice (first on line 3)'],
    ]);
  });

  it('after a field with a line break, the line and the row number differ, both given', async () => {
    const { csv } = load(`${HEADER}\nU1,"Receipts\nin 1940?",5387 million,,treasury_bulletin_1941_01.txt,easy\nU2,What?\n`);
    const report = await loadOfficeQaReport({ csv, corpus: SOURCE.corpus });
    expect(report.tasks.map((t) => t.id)).toEqual(['officeqa/U1']);
    expect(report.problems[0]!.where).toBe(`${csv}:4 (row 2)`);
  });

  it('strict refuses the file over one broken row; a file with no good row is refused', async () => {
    await expect(load(`${HEADER}\n${GOOD('U1')}\nU2,What?\n`, true).tasks).rejects.toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining('1 row(s) of') });
    await expect(load(`${HEADER}\nU2,What?\n`).tasks).rejects.toThrow('cannot be loaded and none can');
    await expect(load(`${HEADER}\n`).tasks).rejects.toThrow('has a header and no rows');
  });

  it('the plugin reports left-out rows through its log', async () => {
    const { csv } = load(`${HEADER}\n${GOOD('U1')}\nU2,What?\n`);
    const warned: string[] = [];
    const kernel = await createTestKernel({ plugins: [officeqa({ datasets: [{ csv, corpus: SOURCE.corpus, testFraction: 0 }] })], logger: { info: () => {}, warn: (m) => warned.push(m) } });
    expect(await kernel.registry.get('taskSuite', 'officeqa:q').tasks('train', { seed: 0 })).toHaveLength(1);
    expect(warned.join('\n')).toContain('[uid U2]: the row has 2 fields');
  });
});

describe('OfficeQA oracle from the answer column', () => {
  it('every loaded task has an oracle that writes its gold answer, and it passes; the instruction asks for units', async () => {
    const tasks = await loadOfficeQa(SOURCE);
    for (const task of tasks) {
      const turns = task.oracle as { toolCalls: { name: string; arguments: { path: string; content: string } }[] }[];
      expect(turns).toHaveLength(1);
      const [call] = turns[0]!.toolCalls;
      expect(call).toMatchObject({ name: 'write_file', arguments: { path: 'answer.txt' } });
      const ws = await prepared(task);
      await ws.writeFile(call!.arguments.path, call!.arguments.content);
      expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
      await ws.writeFile('answer.txt', "I don't know.");
      expect((await task.verify(ws)).pass).toBe(false);
      expect(task.instruction).toContain('with its unit or scale');
    }
  });
});
