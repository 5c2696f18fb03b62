import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { fsWorkspace, type Task, type Workspace } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import jobbench, { insertRowsTask, loadXlsx, memoTask, ordersPerCustomerTask, parseCsv, regionTotalsTask, xlsxBytes } from './index';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

async function prepared(task: Task): Promise<Workspace> {
  const ws = fsWorkspace(tmp('jobbench-office-'));
  await task.setup(ws);
  return ws;
}

describe('jobbench suite families', () => {
  it('cycles through CSV, xlsx, docx and SQLite tasks in the four categories', async () => {
    const kernel = await createTestKernel({ plugins: [jobbench()] });
    const tasks = await kernel.registry.get('taskSuite', 'jobbench').tasks('train', { seed: 2, limit: 6 });
    expect(tasks.map((t) => t.category)).toEqual(['spreadsheet', 'hr-records', 'spreadsheet', 'document', 'database', 'database']);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(6);
  });
});

describe('spreadsheet: region totals in summary.xlsx', () => {
  const task = regionTotalsTask(41);
  let ws: Workspace;
  let totals: [string, number][];
  beforeAll(async () => {
    ws = await prepared(task);
    const sales = (await loadXlsx(await ws.readFile('sales.xlsx'))).getWorksheet('Sales')!;
    const sums = new Map<string, number>();
    sales.eachRow((row, n) => { if (n > 1) sums.set(String(row.getCell(2).value), (sums.get(String(row.getCell(2).value)) ?? 0) + Number(row.getCell(4).value)); });
    totals = [...sums].sort(([a], [b]) => a.localeCompare(b));
  });
  const write = async (rows: ExcelJS.CellValue[][], sheet = 'Summary') => {
    const wb = new ExcelJS.Workbook();
    const s = wb.addWorksheet(sheet);
    for (const r of rows) s.addRow(r);
    await ws.writeFile('summary.xlsx', await xlsxBytes(wb));
  };
  const good = (): ExcelJS.CellValue[][] => [['Region', 'Total'], ...totals.map(([r, t]) => [r, Math.round(t * 100) / 100])];

  it('has four regions', () => expect(totals).toHaveLength(4));
  it('passes the right cells', async () => {
    expect((await task.verify(ws)).details).toBe('summary.xlsx was not written');
    await write(good());
    expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
  });
  it('names a wrong cell', async () => {
    const rows = good();
    rows[3]![1] = (rows[3]![1] as number) + 0.01;
    await write(rows);
    const v = await task.verify(ws);
    expect(v).toMatchObject({ pass: false, reward: 0 });
    expect(v.details).toMatch(/^Summary!B4: expected [\d.]+, found [\d.]+$/);
  });
  it('catches an off-by-one (rows shifted down) and a missing row', async () => {
    await write([[], ...good()]);
    expect((await task.verify(ws)).details).toContain('Summary!A1: expected "Region", found an empty cell');
    await write(good().slice(0, 4));
    expect((await task.verify(ws)).details).toContain('Summary!A5: expected');
  });
  it('catches an extra row, a wrong sheet name, a formula without a value and a non-xlsx file', async () => {
    await write([...good(), ['Total', 1]]);
    expect((await task.verify(ws)).details).toContain('Summary!A6 should be empty');
    await write(good(), 'Sheet1');
    expect((await task.verify(ws)).details).toBe('summary.xlsx has no sheet named "Summary" (sheets: Sheet1)');
    const rows = good();
    rows[1]![1] = { formula: 'SUMIF(Sales!B:B,A2,Sales!D:D)' } as ExcelJS.CellFormulaValue;
    await write(rows);
    expect((await task.verify(ws)).details).toContain('Summary!B2 holds the formula =SUMIF');
    rows[1]![1] = { formula: 'SUMIF(Sales!B:B,A2,Sales!D:D)', result: Math.round(totals[0]![1] * 100) / 100 } as ExcelJS.CellFormulaValue;
    await write(rows);
    expect((await task.verify(ws)).pass).toBe(true);
    await ws.writeFile('summary.xlsx', 'Region,Total\n');
    expect((await task.verify(ws)).details).toMatch(/^summary.xlsx is not a readable .xlsx workbook/);
  });
});

describe('document: fill the memo template', () => {
  const task = memoTask(17);
  const name = /with "([^"]+)" and/.exec(task.instruction)![1]!;
  const date = /\{\{date\}\} with "([^"]+)"/.exec(task.instruction)![1]!;
  let ws: Workspace;
  beforeAll(async () => { ws = await prepared(task); });
  /** Edit word/document.xml of the template, as an agent with unzip/python-docx would. */
  const fill = async (edit: (xml: string) => string) => {
    const zip = await JSZip.loadAsync(await ws.readFile('memo_template.docx'));
    zip.file('word/document.xml', edit(await zip.file('word/document.xml')!.async('string')));
    await ws.writeFile('memo.docx', await zip.generateAsync({ type: 'nodebuffer' }));
  };

  it('passes a correctly filled memo', async () => {
    expect((await task.verify(ws)).details).toBe('memo.docx was not written');
    await fill((x) => x.replaceAll('{{name}}', name).replaceAll('{{date}}', date));
    expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
  });
  it('fails a placeholder left in, a wrong date format, a dropped paragraph and a non-docx', async () => {
    await fill((x) => x.replace('{{name}}', name).replaceAll('{{date}}', date));
    expect((await task.verify(ws)).details).toBe('memo.docx still contains the placeholder {{name}}');
    await fill((x) => x.replaceAll('{{name}}', name).replaceAll('{{date}}', '2026-01-01'));
    expect((await task.verify(ws)).details).toBe(`paragraph 3: expected "Date: ${date}", found "Date: 2026-01-01"`);
    await fill((x) => x.replaceAll('{{name}}', name).replaceAll('{{date}}', date).replace(/<w:p><w:r><w:t xml:space="preserve">Regards[^]*?<\/w:p>/, ''));
    expect((await task.verify(ws)).details).toBe('memo.docx is missing paragraph 7: "Regards, Operations"');
    await ws.writeFile('memo.docx', `To: ${name}\nDate: ${date}\n`);
    expect((await task.verify(ws)).details).toMatch(/^memo.docx is not a readable .docx document/);
  });
});

describe('database: paid orders per customer', () => {
  const task = ordersPerCustomerTask(23);
  let ws: Workspace;
  let counts: Record<string, number>;
  beforeAll(async () => {
    ws = await prepared(task);
    const db = new DatabaseSync(join(ws.root, 'shop.db'), { readOnly: true });
    const rows = db.prepare("SELECT c.name, count(*) AS n FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid' GROUP BY c.name").all() as unknown as { name: string; n: number }[];
    db.close();
    counts = Object.fromEntries(rows.map((r) => [r.name, r.n]));
  });

  it('passes the right counts and fails near misses', async () => {
    expect(Object.keys(counts).length).toBeGreaterThan(1);
    await ws.writeFile('answer.json', JSON.stringify(counts));
    expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
    const [first, second] = Object.keys(counts).sort();
    await ws.writeFile('answer.json', JSON.stringify({ ...counts, [first!]: counts[first!]! + 1 }));
    expect((await task.verify(ws)).details).toBe(`${first}: expected ${counts[first!]}, found ${counts[first!]! + 1}`);
    const { [second!]: _dropped, ...missing } = counts;
    await ws.writeFile('answer.json', JSON.stringify(missing));
    expect((await task.verify(ws)).details).toBe(`${second}: expected ${counts[second!]}, found absent`);
    await ws.writeFile('answer.json', JSON.stringify({ ...counts, 'Nobody Inc': 0 }));
    expect((await task.verify(ws)).details).toBe('Nobody Inc: expected absent (no paid orders), found 0');
  });
});

describe('database: insert the rows of new_products.csv', () => {
  const task = insertRowsTask(5);
  let ws: Workspace;
  beforeEach(async () => { ws = await prepared(task); });
  const insert = (db: DatabaseSync, rows: Record<string, string>[], map = (r: Record<string, string>) => [r.sku, r.name, Number(r.price), Number(r.stock)]) => {
    const ins = db.prepare('INSERT INTO products (sku, name, price, stock) VALUES (?, ?, ?, ?)');
    for (const r of rows) ins.run(...map(r));
  };
  const csv = async () => parseCsv((await ws.readFile('new_products.csv')).toString());
  const withDb = async (fn: (db: DatabaseSync, rows: Record<string, string>[]) => void) => {
    const rows = await csv();
    const db = new DatabaseSync(join(ws.root, 'shop.db'));
    fn(db, rows);
    db.close();
  };

  it('passes when every new row is inserted (names with commas and quotes included)', async () => {
    expect((await task.verify(ws)).details).toMatch(/^new row sku \S+ is missing/);
    await withDb((db, rows) => insert(db, rows));
    expect(await task.verify(ws)).toMatchObject({ pass: true, reward: 1 });
  });
  it('reads rows still in the write-ahead log', async () => {
    const rows = await csv();
    const db = new DatabaseSync(join(ws.root, 'shop.db'));
    db.exec('PRAGMA journal_mode = WAL');
    insert(db, rows);
    expect(await ws.exists('shop.db-wal')).toBe(true);
    expect((await task.verify(ws)).pass).toBe(true);
    db.close();
  });
  it('fails a missing row, prices stored as text, an imported header row and a changed existing row', async () => {
    await withDb((db, rows) => insert(db, rows.slice(1)));
    const first = (await csv())[0]!;
    expect((await task.verify(ws)).details).toBe(`new row sku ${first.sku} is missing`);

    ws = await prepared(task);
    await withDb((db, rows) => insert(db, rows, (r) => [r.sku, r.name, `$${r.price}`, Number(r.stock)]));
    expect((await task.verify(ws)).details).toContain('(text, not a number)');

    ws = await prepared(task);
    await withDb((db, rows) => { insert(db, rows); db.prepare("INSERT INTO products VALUES ('sku', 'name', 'price', 'stock')").run(); });
    expect((await task.verify(ws)).details).toBe('unexpected rows with sku "sku"');

    ws = await prepared(task);
    await withDb((db, rows) => { insert(db, rows); db.prepare('UPDATE products SET stock = stock + 1 WHERE rowid = 1').run(); });
    expect((await task.verify(ws)).details).toMatch(/^sku \S+: stock expected \d+, found \d+$/);

    await ws.writeFile('shop.db', 'not a database');
    expect((await task.verify(ws)).details).toBe('cannot read the database: shop.db: file is not a database');
  });
});
