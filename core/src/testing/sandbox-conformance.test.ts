import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { outcomeWhenMissing } from './harnesses';
import { limitCheck } from './sandbox-conformance';

describe('what a test whose prerequisite is missing does', () => {
  it('runs when nothing is missing, skips on a user\'s machine, fails in CI', () => {
    expect(outcomeWhenMissing(undefined, {})).toBe('run');
    expect(outcomeWhenMissing(undefined, { CI: 'true' })).toBe('run');
    expect(outcomeWhenMissing('no cgroup', {})).toBe('skip');
    expect(outcomeWhenMissing('no cgroup', { CI: 'false' })).toBe('skip');
    expect(outcomeWhenMissing('no cgroup', { CI: 'true' })).toBe('fail');
  });
});

describe('limitCheck', () => {
  it('checks a limit said to be enforced, asserts open one unenforced by design, and is missing otherwise', () => {
    expect(limitCheck('pids', { limits: { pids: 'cgroup v2 pids.max' } })).toEqual({ run: 'check', how: 'cgroup v2 pids.max' });
    expect(limitCheck('pids', { limits: { pids: 'cgroup v2 pids.max' }, unenforced: { pids: 'network only' } })).toEqual({ run: 'open', why: 'network only' });
    expect(limitCheck('memory', { limits: { memory: 'not enforced: prlimit is missing' } })).toEqual({ run: 'missing', missing: 'the memory limit is not enforced: prlimit is missing' });
    expect(limitCheck('wall', {})).toEqual({ run: 'missing', missing: 'the provider does not say how it enforces the wall limit here' });
  });
});

// The suite's own registration, end to end: a child jest over a fixture whose machine cannot
// enforce pids or cpus and whose provider does not say how it enforces wall.
describe('limit checks a machine cannot enforce', () => {
  const repo = resolve(__dirname, '..', '..', '..');
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-limit-ci-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const runFixture = (ci: boolean) => {
    const out = join(dir, `${ci ? 'ci' : 'local'}.json`);
    const env = { ...process.env };
    delete env.CI;
    if (ci) env.CI = 'true';
    const r = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--config', join(repo, 'jest.config.js'), '--rootDir', repo,
      '--testMatch', '**/testing/__fixtures__/limit-ci.fixture.ts', '--json', '--outputFile', out], { cwd: repo, env, encoding: 'utf8', timeout: 90_000 });
    const report = JSON.parse(readFileSync(out, 'utf8')) as { testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }> };
    const tests = report.testResults.flatMap((t) => t.assertionResults);
    const status = (limit: string) => tests.filter((t) => t.fullName.includes(`limit ${limit}`)).map((t) => ({ status: t.status, name: t.fullName, failure: t.failureMessages.join('\n') }));
    return { code: r.status, stderr: r.stderr, status };
  };

  it('are visible skips with the reason printed, without CI', () => {
    const r = runFixture(false);
    for (const [limit, why] of [['pids', 'no pids controller'], ['cpus', 'no cpu controller'], ['wall', 'does not say how it enforces the wall limit']]) {
      expect(r.status(limit!)).toEqual([expect.objectContaining({ status: 'pending', name: expect.stringContaining(`skipped: `) })]);
      expect(r.status(limit!)[0]!.name).toContain(why);
      expect(r.stderr).toContain(why!);
    }
    // The one it was told is enforced ran (and failed: the fake provider makes no sandbox).
    expect(r.status('memory')).toEqual([expect.objectContaining({ status: 'failed', failure: expect.stringContaining('fixture: sandbox asked for with {"memoryMb":160}') })]);
    expect(r.code).toBe(1);
  }, 120_000);

  it('are failures under CI=true, each naming what is missing', () => {
    const r = runFixture(true);
    for (const [limit, why] of [['pids', 'no pids controller'], ['cpus', 'no cpu controller'], ['wall', 'does not say how it enforces the wall limit']]) {
      expect(r.status(limit!)).toEqual([expect.objectContaining({ status: 'failed', failure: expect.stringContaining(`required in CI: `) })]);
      expect(r.status(limit!)[0]!.failure).toContain(why);
    }
    expect(r.code).toBe(1);
  }, 120_000);
});
