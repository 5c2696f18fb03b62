import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { clawgym, stepsOf, tinyProject, until } from './__fixtures__/tiny-project';

// The built CLI on real runs (embedded engine and trainer, agentloop in bubblewrap).
describe('one run folder, one process (built CLI)', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('two `clawgym run` at once on one folder: one refuses naming the other, the other trains with 0 infra', async () => {
    const { dir, runDir } = tinyProject(2);
    dirs.push(dir);
    const a = clawgym(dir, ['run']);
    const b = clawgym(dir, ['run']);
    const results = await Promise.all([a.exited, b.exited]);
    const refused = results.filter((r) => r.code === 1);
    const ran = results.filter((r) => r.code === 0);
    expect({ refused: refused.length, ran: ran.length }).toEqual({ refused: 1, ran: 1 });
    const pid = (ran[0] === results[0] ? a : b).child.pid;
    expect(refused[0]!.out).toContain(`is in use by \`clawgym run\` (PID ${pid} on`);
    expect(refused[0]!.out).toContain('code: CLAWGYM_RUN_LOCKED');
    expect(stepsOf(runDir)).toEqual({ steps: '1,2', infra: 0, evals: '0,2' });
  }, 120_000);

  it('`run --resume` beside a live run is refused; the live run keeps every step once', async () => {
    const { dir, runDir } = tinyProject(3);
    dirs.push(dir);
    const live = clawgym(dir, ['run']);
    await until(() => { try { return JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')).step >= 1; } catch { return false; } }, 60_000, 'step 1');
    const started = Date.now();
    const resume = await clawgym(dir, ['run', '--resume']).exited;
    expect(resume.code).toBe(1);
    expect(resume.out).toContain(`is in use by \`clawgym run\` (PID ${live.child.pid} on`);
    expect(resume.out).toContain('code: CLAWGYM_RUN_LOCKED');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await live.exited).code).toBe(0);
    expect(stepsOf(runDir)).toEqual({ steps: '1,2,3', infra: 0, evals: '0,3' });
    // Once the first has ended, the folder is free: the resume finds nothing left to do and says so.
    const after = await clawgym(dir, ['run', '--resume']).exited;
    expect(after.code).toBe(0);
    expect(stepsOf(runDir).steps).toBe('1,2,3');
  }, 120_000);
});
