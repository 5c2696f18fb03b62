import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { bubblewrapPath } from '@clawgym/core';
import { describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..', '..', '..', '..');
const ROOT = join(__dirname, '..', '__fixtures__', 'jobbench-checks');

describeIf(bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'clawgym eval on a JobBench folder graded by CHECKS.json (e2e, built CLI)', () => {
  it('grades through the pipeline with no judge configured, and warns that the tasks have no oracle', () => {
    const dir = tempProject({ 'clawgym.config.mjs': `export default {
  plugins: [['@clawgym/task-jobbench', { dirs: [${JSON.stringify({ root: ROOT, name: 'checks', testFraction: 1 })}] }]],
  harnesses: ['agentloop'], tasks: ['checks'], run: { concurrency: 1, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-jobbench-checks-');
    const r = spawnSync(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'eval', '--engine', 'oracle', '--json'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('warning: 1 of 1 task(s) have no oracle, so the oracle engine cannot pass them: jobbench/analyst/task1');
    const all = (JSON.parse(r.stdout) as { rows: { category: string; tasks: number; pass1: number; infra: number }[] }).rows.find((x) => x.category === 'all');
    // Graded by the checks alone (no judge is configured), and failed: the oracle-less task was not done.
    expect(all).toMatchObject({ tasks: 1, pass1: 0, infra: 0 });
  }, 180_000);
});
