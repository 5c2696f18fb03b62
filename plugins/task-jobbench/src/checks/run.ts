/** Grade a workspace with declarative checks: each check passes or says what it found instead. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { ClawGymError, ErrorCodes, type Verdict, type Workspace } from '@clawgym/core';
import { parseCsv, splitRow } from '../csv';
import { memoryDb, rowsOf, withWorkspaceDb, type Database } from '../sqlite';
import { csvCell, fileText, loadXlsx, readCell } from './read';
import type { Check } from './schema';

/** The outcome of one check. */
export interface CheckResult { check: Check; pass: boolean; details: string }

/** Where checks find what they need besides the workspace. */
export interface CheckContext {
  /** Folder that `file_equals` references are relative to; it is never copied into the workspace. */
  referenceDir?: string;
}

const squash = (s: string, ignoreCase?: boolean) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return ignoreCase ? t.toLowerCase() : t;
};
const show = (v: unknown) => (v === undefined ? 'an empty cell' : JSON.stringify(v));

type Cell = string | number | boolean | null;

/** Do two query results hold the same rows, cell by cell (numbers within `tolerance`)? */
function sameRows(got: unknown[][], want: Cell[][], tolerance: number): string | undefined {
  if (got.length !== want.length) return `${got.length} row(s), expected ${want.length}`;
  for (let r = 0; r < want.length; r++) {
    const g = got[r]!;
    const w = want[r]!;
    if (g.length !== w.length) return `row ${r + 1} has ${g.length} column(s), expected ${w.length}`;
    for (let c = 0; c < w.length; c++) {
      const a = g[c];
      const b = w[c];
      const ok = typeof b === 'number' && typeof a === 'number' ? Math.abs(a - b) <= tolerance
        : typeof b === 'boolean' ? a === (b ? 1 : 0) || a === b
          : (a ?? null) === b;
      if (!ok) return `row ${r + 1}, column ${c + 1}: ${show(a)}, expected ${show(b)}`;
    }
  }
  return undefined;
}

function tableFromCsv(text: string): Database {
  const rows = parseCsv(text);
  const header = splitRow(text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n').split('\n')[0]!).map((h) => h.trim());
  const db = memoryDb();
  db.exec(`CREATE TABLE data (${header.map((h) => `"${h.replace(/"/g, '""')}"`).join(', ')})`);
  const insert = db.prepare(`INSERT INTO data VALUES (${header.map(() => '?').join(', ')})`);
  for (const row of rows) insert.run(...header.map((h) => csvCell(row[h] ?? '')));
  return db;
}

async function runOne(ws: Workspace, check: Check, ctx: CheckContext): Promise<{ pass: boolean; details: string }> {
  const exists = await ws.exists(check.path);
  if (check.type === 'file_absent') return exists ? { pass: false, details: `${check.path} exists` } : { pass: true, details: `${check.path} is absent` };
  if (!exists) return { pass: false, details: `${check.path} was not written` };
  switch (check.type) {
    case 'file_exists':
      return { pass: true, details: `${check.path} exists` };
    case 'contains':
    case 'not_contains': {
      let text: string;
      try { text = await fileText(ws, check.path); } catch (e) { return { pass: false, details: `${check.path} cannot be read (${(e as Error).message.split('\n')[0]})` }; }
      const found = squash(text, check.ignoreCase).includes(squash(check.text, check.ignoreCase));
      const want = check.type === 'contains';
      return { pass: found === want, details: `${check.path} ${found ? 'contains' : 'does not contain'} ${JSON.stringify(check.text)}` };
    }
    case 'xlsx_cell': {
      let wb;
      try { wb = await loadXlsx(await ws.readFile(check.path)); } catch (e) { return { pass: false, details: `${check.path} is not a readable .xlsx workbook (${(e as Error).message.split('\n')[0]})` }; }
      const cell = readCell(wb, check.sheet, check.cell);
      const where = `${check.path} ${check.sheet ? `${check.sheet}!` : ''}${check.cell}`;
      if (typeof cell === 'string') return { pass: false, details: `${where}: ${cell}` };
      const problems: string[] = [];
      if (check.equals !== undefined) {
        const v = cell.value;
        if (typeof v === 'object') problems.push(`holds the formula =${v.formulaWithoutResult} with no saved value`);
        else {
          const want = check.equals;
          const ok = want === null ? v === undefined || v === ''
            : typeof want === 'number' ? typeof v === 'number' && Math.abs(v - want) <= (check.tolerance ?? 1e-9)
              : typeof want === 'string' ? typeof v === 'string' && v.trim() === want.trim() : v === want;
          if (!ok) problems.push(`value ${show(v)}${typeof v === 'string' && typeof want === 'number' ? ' (text, not a number)' : ''}, expected ${JSON.stringify(want)}`);
        }
      }
      if (check.numFmt !== undefined && cell.numFmt !== check.numFmt) problems.push(`number format ${JSON.stringify(cell.numFmt)}, expected ${JSON.stringify(check.numFmt)}`);
      if (check.formatted !== undefined && cell.formatted !== check.formatted) problems.push(`shows ${JSON.stringify(cell.formatted)}, expected ${JSON.stringify(check.formatted)}`);
      return problems.length ? { pass: false, details: `${where}: ${problems.join('; ')}` } : { pass: true, details: `${where} is ${JSON.stringify(cell.formatted)}` };
    }
    case 'file_equals': {
      const ref = referencePath(check.reference, ctx);
      const want = await readFile(ref);
      const got = await ws.readFile(check.path);
      const text = (b: Buffer) => b.toString('utf8').replace(/\r\n/g, '\n').split('\n').map((l) => l.trimEnd()).join('\n').trimEnd();
      const same = check.mode === 'text' ? text(got) === text(want) : got.equals(want);
      if (same) return { pass: true, details: `${check.path} equals ${check.reference}` };
      if (check.mode === 'text') {
        const a = text(got).split('\n');
        const b = text(want).split('\n');
        const i = b.findIndex((l, k) => a[k] !== l);
        const at = i < 0 ? b.length : i;
        return { pass: false, details: `${check.path} differs from ${check.reference} at line ${at + 1}: ${show(a[at])}, expected ${show(b[at])}` };
      }
      return { pass: false, details: `${check.path} (${got.length} bytes) differs from ${check.reference} (${want.length} bytes)` };
    }
    case 'csv_query':
    case 'sqlite_query': {
      const tolerance = check.tolerance ?? 1e-9;
      let rows: unknown[][];
      try {
        if (check.type === 'csv_query') {
          const db = tableFromCsv((await ws.readFile(check.path)).toString('utf8'));
          try { rows = rowsOf(db, check.query); } finally { db.close(); }
        } else {
          const read = await withWorkspaceDb(ws, check.path, (db) => rowsOf(db, check.query));
          if ('error' in read) return { pass: false, details: `cannot query ${read.error}` };
          rows = read.value;
        }
      } catch (e) {
        return { pass: false, details: `${check.path}: the query failed (${(e as Error).message})` };
      }
      const wrong = sameRows(rows, check.equals, tolerance);
      return wrong ? { pass: false, details: `${check.path}: ${wrong}` } : { pass: true, details: `${check.path}: the query gives the ${rows.length} expected row(s)` };
    }
  }
}

/** The host path of a reference file, refused when it leaves the reference folder. */
export function referencePath(reference: string, ctx: CheckContext): string {
  const bad = (message: string) => new ClawGymError(ErrorCodes.CONFIG_INVALID, message, { hint: 'reference files of file_equals checks lie in the task\'s reference folder (a JobBench task\'s expected/ beside task_folder/)' });
  if (!ctx.referenceDir) throw bad(`file_equals needs a reference folder for ${reference}`);
  const full = resolve(ctx.referenceDir, reference);
  const rel = relative(ctx.referenceDir, full);
  if (rel.startsWith('..') || isAbsolute(rel)) throw bad(`the reference ${reference} is outside ${ctx.referenceDir}`);
  if (!existsSync(full)) throw bad(`the reference ${reference} does not exist in ${ctx.referenceDir}`);
  return full;
}

/** Run every check on `ws`, in order. */
export async function runChecks(ws: Workspace, checks: readonly Check[], ctx: CheckContext = {}): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const check of checks) out.push({ check, ...await runOne(ws, check, ctx) });
  return out;
}

/**
 * A verdict from checks: reward = share of checks passed, pass = all passed (or at least
 * `passThreshold` of them); details list every check with ✓ or ✗ and what was found.
 */
export async function checksVerdict(ws: Workspace, checks: readonly Check[], ctx: CheckContext = {}, passThreshold = 1): Promise<Verdict & { results: CheckResult[] }> {
  const results = await runChecks(ws, checks, ctx);
  const passed = results.filter((r) => r.pass).length;
  const reward = results.length ? passed / results.length : 0;
  const line = (r: CheckResult, i: number) => `${r.pass ? '✓' : '✗'} [${r.check.id ?? i + 1}] ${r.check.type} ${r.details}`;
  return { reward, pass: results.length > 0 && reward >= passThreshold, details: `${passed}/${results.length} checks passed\n${results.map(line).join('\n')}`, results };
}
