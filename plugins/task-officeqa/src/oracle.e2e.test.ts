import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..', '..', '..');
const DIR = join(__dirname, '__fixtures__', 'officeqa');

/** `clawgym eval` (the built CLI) on a CSV-loaded OfficeQA suite, every question in the test split. */
function evalWith(engine: 'oracle' | 'null') {
  const dataset = { csv: join(DIR, 'officeqa.csv'), corpus: join(DIR, 'corpus'), testFraction: 1 };
  const dir = tempProject({ 'clawgym.config.mjs': `export default {
  plugins: [['@clawgym/task-officeqa', { datasets: [${JSON.stringify(dataset)}] }]],
  harnesses: ['agentloop'], tasks: ['officeqa:officeqa'], run: { concurrency: 3, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-officeqa-oracle-');
  const r = spawnSync(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'eval', '--engine', engine, '--json'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  expect(r.stderr).toContain('evaluating 3 tasks');
  expect(r.status).toBe(0);
  const rows = (JSON.parse(r.stdout) as { rows: { category: string; tasks: number; pass1: number; infra: number }[] }).rows;
  return rows.find((x) => x.category === 'all');
}

describeIf(bubblewrapMissing(), 'clawgym eval on a CSV-loaded OfficeQA suite (e2e, built CLI)', () => {
  it('the oracle from the answer column scores 100%, the null engine 0%', () => {
    expect(evalWith('oracle')).toMatchObject({ tasks: 3, pass1: 1, infra: 0 });
    expect(evalWith('null')).toMatchObject({ tasks: 3, pass1: 0, infra: 0 });
  }, 240_000);
});
