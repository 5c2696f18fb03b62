import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { buildDocx, xlsxBytes } from '../index';

const dirs: string[] = [];
afterAll(() => { removeTempProjects(); for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const repo = resolve(__dirname, '..', '..', '..', '..');
const FIXTURE = join(__dirname, '..', '__fixtures__', 'jobbench-checks');

/** `clawgym eval` (the built CLI) with `engine` on a JobBench root; the "all" row and stderr. */
function evalWith(root: string, engine: 'oracle' | 'null') {
  const dir = tempProject({ 'clawgym.config.mjs': `export default {
  plugins: [['@clawgym/task-jobbench', { dirs: [${JSON.stringify({ root, name: 'checks', testFraction: 1 })}] }]],
  harnesses: ['agentloop'], tasks: ['checks'], run: { concurrency: 1, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-jobbench-checks-');
  const r = spawnSync(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'eval', '--engine', engine, '--json'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  expect(r.status).toBe(0);
  const all = (JSON.parse(r.stdout) as { rows: { category: string; tasks: number; pass1: number; infra: number }[] }).rows.find((x) => x.category === 'all');
  return { all, stderr: r.stderr };
}

describeIf(bubblewrapMissing(), 'clawgym eval on a JobBench folder graded by CHECKS.json (e2e, built CLI)', () => {
  it('without a solution/ the oracle engine warns it has nothing to play; the checks grade with no judge configured', () => {
    const { all, stderr } = evalWith(FIXTURE, 'oracle');
    expect(stderr).toContain('warning: 1 of 1 task(s) have no oracle, so the oracle engine cannot pass them: jobbench/analyst/task1');
    expect(all).toMatchObject({ tasks: 1, pass1: 0, infra: 0 });
  }, 180_000);

  it('with a solution/ folder the oracle scores 100% through the sandbox and the checks, the null engine 0%', async () => {
    const root = mkdtempSync(join(tmpdir(), 'jobbench-solution-'));
    dirs.push(root);
    cpSync(FIXTURE, root, { recursive: true });
    const solution = join(root, 'analyst', 'task1', 'solution');
    mkdirSync(solution);
    writeFileSync(join(solution, 'summary.csv'), 'region,total\nEast,1300\nWest,300\n');
    const wb = new ExcelJS.Workbook();
    const cell = wb.addWorksheet('Totals').getCell('B1');
    cell.value = 1600;
    cell.numFmt = '#,##0.00';
    writeFileSync(join(solution, 'totals.xlsx'), await xlsxBytes(wb));
    writeFileSync(join(solution, 'memo.docx'), await buildDocx(['To: Dana Whitfield', 'The grand total is 1,600.00.']));
    const oracle = evalWith(root, 'oracle');
    expect(oracle.stderr).not.toContain('have no oracle');
    expect(oracle.all).toMatchObject({ tasks: 1, pass1: 1, infra: 0 });
    expect(evalWith(root, 'null').all).toMatchObject({ tasks: 1, pass1: 0, infra: 0 });
  }, 240_000);
});
