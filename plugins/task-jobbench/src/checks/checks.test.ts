import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { fsWorkspace, type Workspace } from '@clawgym/core';
import { buildDocx, sqliteBytes, xlsxBytes } from '../index';
import { ChecksFileSchema, checksVerdict, runChecks, type Check } from './index';
import { loadJobBench, loadJobBenchReport } from '../jobbench-dir';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

async function totalsXlsx(value: number | string, numFmt?: string): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const sheet = wb.addWorksheet('Totals');
  sheet.getCell('A1').value = 'Grand total';
  sheet.getCell('B1').value = value;
  if (numFmt) sheet.getCell('B1').numFmt = numFmt;
  sheet.getCell('B2').value = { formula: 'B1*2' } as ExcelJS.CellFormulaValue;
  sheet.getCell('C1').value = 0.125;
  sheet.getCell('C1').numFmt = '0.0%';
  return xlsxBytes(wb);
}

/** A workspace with one file of every kind the checks read. */
async function workspace(): Promise<{ ws: Workspace; refs: string }> {
  const ws = fsWorkspace(tmp('checks-ws-'));
  const refs = tmp('checks-refs-');
  await ws.writeFile('notes.txt', 'Quarter closed.\r\nTotal:   1,600.00 USD\n');
  await ws.writeFile('memo.docx', await buildDocx(['MEMORANDUM', 'To: Dana Whitfield', 'The total is 1,600.00.']));
  await ws.writeFile('totals.xlsx', await totalsXlsx(1600, '#,##0.00'));
  await ws.writeFile('summary.csv', 'region,total\nEast,1300\n"West, coast",300.5\n');
  await ws.writeFile('shop.db', sqliteBytes((db) => { db.exec("CREATE TABLE t (name TEXT, n INTEGER); INSERT INTO t VALUES ('a', 1), ('b', 2)"); }));
  writeFileSync(join(refs, 'summary.csv'), 'region,total\r\nEast,1300  \n"West, coast",300.5\n\n');
  writeFileSync(join(refs, 'notes.txt'), 'Quarter closed.\r\nTotal:   1,600.00 USD\n');
  return { ws, refs };
}

const CASES: [string, Check, boolean, string][] = [
  ['file exists', { type: 'file_exists', path: 'notes.txt' }, true, 'notes.txt exists'],
  ['file exists, missing', { type: 'file_exists', path: 'report.pdf' }, false, 'report.pdf was not written'],
  ['file absent', { type: 'file_absent', path: 'draft.txt' }, true, 'draft.txt is absent'],
  ['file absent, present', { type: 'file_absent', path: 'notes.txt' }, false, 'notes.txt exists'],
  ['text contains (whitespace runs as one space)', { type: 'contains', path: 'notes.txt', text: 'Total: 1,600.00 USD' }, true, 'notes.txt contains "Total: 1,600.00 USD"'],
  ['text contains, case differs', { type: 'contains', path: 'notes.txt', text: 'total: 1,600.00 usd' }, false, 'notes.txt does not contain "total: 1,600.00 usd"'],
  ['text contains, ignoring case', { type: 'contains', path: 'notes.txt', text: 'total: 1,600.00 usd', ignoreCase: true }, true, 'notes.txt contains "total: 1,600.00 usd"'],
  ['docx contains', { type: 'contains', path: 'memo.docx', text: 'To: Dana Whitfield' }, true, 'memo.docx contains "To: Dana Whitfield"'],
  ['docx contains, absent', { type: 'contains', path: 'memo.docx', text: 'To: Omar Haddad' }, false, 'memo.docx does not contain "To: Omar Haddad"'],
  ['docx does not contain', { type: 'not_contains', path: 'memo.docx', text: '{{name}}' }, true, 'memo.docx does not contain "{{name}}"'],
  ['docx does not contain, present', { type: 'not_contains', path: 'memo.docx', text: 'MEMORANDUM' }, false, 'memo.docx contains "MEMORANDUM"'],
  ['xlsx cell value and format', { type: 'xlsx_cell', path: 'totals.xlsx', sheet: 'Totals', cell: 'B1', equals: 1600, numFmt: '#,##0.00', formatted: '1,600.00' }, true, 'totals.xlsx Totals!B1 is "1,600.00"'],
  ['xlsx cell, wrong value', { type: 'xlsx_cell', path: 'totals.xlsx', cell: 'B1', equals: 1601 }, false, 'totals.xlsx B1: value 1600, expected 1601'],
  ['xlsx cell, percent format shown', { type: 'xlsx_cell', path: 'totals.xlsx', cell: 'C1', formatted: '12.5%' }, true, 'totals.xlsx C1 is "12.5%"'],
  ['xlsx cell, wrong format', { type: 'xlsx_cell', path: 'totals.xlsx', cell: 'B1', formatted: '$1,600' }, false, 'totals.xlsx B1: shows "1,600.00", expected "$1,600"'],
  ['xlsx cell, formula without a saved value', { type: 'xlsx_cell', path: 'totals.xlsx', cell: 'B2', equals: 3200 }, false, 'totals.xlsx B2: holds the formula =B1*2 with no saved value'],
  ['xlsx cell, no such sheet', { type: 'xlsx_cell', path: 'totals.xlsx', sheet: 'Summary', cell: 'B1', equals: 1600 }, false, 'totals.xlsx Summary!B1: no sheet named "Summary" (sheets: Totals)'],
  ['xlsx cell, empty', { type: 'xlsx_cell', path: 'totals.xlsx', cell: 'D9', equals: null }, true, 'totals.xlsx D9 is ""'],
  ['xlsx cell, not a workbook', { type: 'xlsx_cell', path: 'notes.txt', cell: 'A1', equals: 1 }, false, 'notes.txt is not a readable .xlsx workbook'],
  ['file equals a reference as text', { type: 'file_equals', path: 'summary.csv', reference: 'summary.csv', mode: 'text' }, true, 'summary.csv equals summary.csv'],
  ['file equals a reference byte for byte', { type: 'file_equals', path: 'notes.txt', reference: 'notes.txt' }, true, 'notes.txt equals notes.txt'],
  ['file equals, bytes differ', { type: 'file_equals', path: 'summary.csv', reference: 'summary.csv' }, false, 'summary.csv (43 bytes) differs from summary.csv (47 bytes)'],
  ['file equals, a line differs', { type: 'file_equals', path: 'notes.txt', reference: 'summary.csv', mode: 'text' }, false, 'notes.txt differs from summary.csv at line 1: "Quarter closed.", expected "region,total"'],
  ['csv query', { type: 'csv_query', path: 'summary.csv', query: 'SELECT region, total FROM data ORDER BY region', equals: [['East', 1300], ['West, coast', 300.5]] }, true, 'summary.csv: the query gives the 2 expected row(s)'],
  ['csv query, a sum', { type: 'csv_query', path: 'summary.csv', query: 'SELECT sum(total) FROM data', equals: [[1600.5]] }, true, 'summary.csv: the query gives the 1 expected row(s)'],
  ['csv query, wrong value', { type: 'csv_query', path: 'summary.csv', query: 'SELECT total FROM data ORDER BY region', equals: [[1300], [300]] }, false, 'summary.csv: row 2, column 1: 300.5, expected 300'],
  ['csv query, a missing column', { type: 'csv_query', path: 'summary.csv', query: 'SELECT amount FROM data', equals: [[1]] }, false, 'summary.csv: the query failed (no such column: amount)'],
  ['sqlite query', { type: 'sqlite_query', path: 'shop.db', query: 'SELECT name, n FROM t ORDER BY n', equals: [['a', 1], ['b', 2]] }, true, 'shop.db: the query gives the 2 expected row(s)'],
  ['sqlite query, a row missing', { type: 'sqlite_query', path: 'shop.db', query: 'SELECT name FROM t', equals: [['a'], ['b'], ['c']] }, false, 'shop.db: 2 row(s), expected 3'],
];

describe('declarative checks', () => {
  it.each(CASES)('%s', async (_, check, pass, details) => {
    const { ws, refs } = await workspace();
    const [result] = await runChecks(ws, [check], { referenceDir: refs });
    expect(result!.pass).toBe(pass);
    expect(result!.details).toContain(details);
  });

  it('a verdict is the share of checks passed, and lists each', async () => {
    const { ws, refs } = await workspace();
    const v = await checksVerdict(ws, [CASES[0]![1], CASES[1]![1], CASES[4]![1], { ...CASES[6]![1], id: 'case-free' }], { referenceDir: refs });
    expect(v).toMatchObject({ reward: 0.75, pass: false });
    expect(v.details.split('\n')).toEqual(['3/4 checks passed', '✓ [1] file_exists notes.txt exists', '✗ [2] file_exists report.pdf was not written',
      '✓ [3] contains notes.txt contains "Total: 1,600.00 USD"', '✓ [case-free] contains notes.txt contains "total: 1,600.00 usd"']);
  });

  it('a reference outside the reference folder is refused', async () => {
    const { ws, refs } = await workspace();
    await expect(runChecks(ws, [{ type: 'file_equals', path: 'notes.txt', reference: '../etc/passwd' }], { referenceDir: refs })).rejects.toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID' });
  });

  it('the schema says what is wrong with a check', () => {
    const r = ChecksFileSchema.safeParse([{ type: 'xlsx_cell', path: 'a.xlsx', cell: 'b2', equals: 1 }, { type: 'cell_equals', path: 'a' }]);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error!.issues)).toContain('an A1-style address such as B2');
  });
});

const ROOT = join(__dirname, '..', '__fixtures__', 'jobbench-checks');

describe('JobBench folders graded by CHECKS.json, without a judge', () => {
  it('loads the checks, keeps CHECKS.json and expected/ out of the workspace, and grades the deliverables', async () => {
    const [task] = await loadJobBench(ROOT);
    const ws = fsWorkspace(tmp('checks-task-'));
    await task!.setup(ws);
    expect(await ws.list()).toEqual(['draft.txt', 'sales.csv']);
    const before = await task!.verify(ws);
    expect(before).toMatchObject({ pass: false, reward: 0 });
    expect(before.details).toContain('✗ [draft-deleted] file_absent draft.txt exists');

    await ws.writeFile('summary.csv', 'region,total\nEast,1300\nWest,300\n');
    await ws.writeFile('totals.xlsx', await totalsXlsx(1600, '#,##0.00'));
    await ws.writeFile('memo.docx', await buildDocx(['To: Dana Whitfield', 'The grand total is 1,600.00.']));
    rmSync(join(ws.root, 'draft.txt'));
    expect(await task!.verify(ws)).toMatchObject({ pass: true, reward: 1, details: expect.stringContaining('8/8 checks passed') });

    await ws.writeFile('totals.xlsx', await totalsXlsx('1600'));
    const wrong = await task!.verify(ws);
    expect(wrong).toMatchObject({ pass: false, reward: 7 / 8 });
    expect(wrong.details).toContain('value "1600" (text, not a number), expected 1600; number format "General", expected "#,##0.00"; shows "1600", expected "1,600.00"');
  });

  it('a broken task among good ones: the good ones load, the broken one is reported', async () => {
    const root = tmp('checks-root-');
    cpSync(ROOT, root, { recursive: true });
    cpSync(join(root, 'analyst', 'task1'), join(root, 'analyst', 'task2'), { recursive: true });
    writeFileSync(join(root, 'analyst', 'task2', 'task_folder', 'CHECKS.json'), '[{"type": "cell_equals", "path": "a.xlsx"}]');
    cpSync(join(root, 'analyst', 'task1'), join(root, 'analyst', 'task3'), { recursive: true });
    writeFileSync(join(root, 'analyst', 'task3', 'task_folder', 'CHECKS.json'), '[{"type": "file_equals", "path": "a.csv", "reference": "nowhere.csv"}]');
    cpSync(join(root, 'analyst', 'task1'), join(root, 'analyst', 'task4'), { recursive: true });
    rmSync(join(root, 'analyst', 'task4', 'task_folder', 'CHECKS.json'));
    const report = await loadJobBenchReport(root);
    expect(report.tasks.map((t) => t.id)).toEqual(['jobbench/analyst/task1']);
    const problems = report.problems.map((p) => `${p.folder.slice(root.length + 1)}: ${p.message}`);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^analyst\/task2\/task_folder: .*CHECKS\.json: 0\.type: /);
    expect(problems[1]).toMatch(/^analyst\/task3\/task_folder: the reference nowhere\.csv does not exist in .*analyst\/task3\/expected$/);
    expect(problems[2]).toMatch(/^analyst\/task4\/task_folder: .* has neither RUBRICS\.json \(graded by a judge\) nor CHECKS\.json \(deterministic checks\)$/);
    const warned: string[] = [];
    expect(await loadJobBench(root, undefined, { warn: (m) => warned.push(m) })).toHaveLength(1);
    expect(warned[0]).toContain('loaded 1 task(s), left out 3');
    await expect(loadJobBench(root, undefined, { strict: true })).rejects.toThrow('3 JobBench task(s)');
  });

  it('with checks and a rubric, a failed check fails the task without asking the judge', async () => {
    const root = tmp('checks-both-');
    cpSync(ROOT, root, { recursive: true });
    writeFileSync(join(root, 'analyst', 'task1', 'task_folder', 'RUBRICS.json'), '["The memo is polite."]');
    const [task] = await loadJobBench(root);
    const ws = fsWorkspace(tmp('checks-both-ws-'));
    await task!.setup(ws);
    // No judge is configured: asking it would throw. A failed check decides first.
    const v = await task!.verify(ws);
    expect(v).toMatchObject({ pass: false });
    expect(v.details).toContain('the rubric judge was not asked');
  });
});
