import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { clawgym, stepsOf, tinyProject, until } from './__fixtures__/tiny-project';

// A run folder that stops taking writes in the middle of a step (the built CLI on real runs). The
// test mounts what it needs (a bind mount turned read-only, a small tmpfs filled up), as root.
const root = process.getuid?.() === 0;
if (!root) console.warn('run folder fault tests skipped: they mount file systems, which needs root');
const asRoot = root ? describe : describe.skip;

const sh = (cmd: string, ...args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
};

asRoot('a run folder that cannot be written mid-step (built CLI)', () => {
  const dirs: string[] = [];
  const mounts: string[] = [];
  afterAll(() => {
    for (const m of mounts.reverse()) while (spawnSync('umount', ['-l', m]).status === 0);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Step 2 is running: started, and one of its rollouts has a recorded call. */
  const inStep2 = (runDir: string) => () => {
    try {
      if (JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')).stepStarts?.['2'] !== 1) return false;
      return readdirSync(join(runDir, 'calls')).some((f) => f.startsWith('s2a1-') && readFileSync(join(runDir, 'calls', f), 'utf8').includes('"callIndex"'));
    } catch { return false; }
  };

  async function failMidStep(makeFail: (runs: string) => void, undo: (runs: string) => void, code: string) {
    const { dir, runDir } = tinyProject(3);
    dirs.push(dir);
    const runs = join(dir, 'runs');
    mkdirSync(runs);
    return { dir, runDir, runs, go: async () => {
      const run = clawgym(dir, ['run']);
      await until(inStep2(runDir), 90_000, 'step 2 to be running');
      makeFail(runs);
      const failedAt = Date.now();
      const timer = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000).unref());
      const exit = await Promise.race([run.exited, timer]);
      if (exit === 'hung') run.child.kill('SIGKILL');
      const seconds = (Date.now() - failedAt) / 1000;
      expect(exit).toMatchObject({ code: 1 });
      expect(seconds).toBeLessThan(10);
      expect(run.output()).toContain('code: CLAWGYM_RUN_DIR_UNWRITABLE');
      expect(run.output()).toMatch(new RegExp(`cannot write ${runDir}\\S* \\(${code}: `));
      expect(run.output()).toContain('then `clawgym run --resume` continues from there');
      // The state as of the last finished step: step 1.
      expect(JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')).step).toBe(1);
      undo(runs);
      const resumed = await clawgym(dir, ['run', '--resume']).exited;
      expect(resumed.code).toBe(0);
      expect(stepsOf(runDir)).toEqual({ steps: '1,2,3', infra: 0, evals: '0,3' });
    } };
  }

  it('read-only: exits within 10 s with CLAWGYM_RUN_DIR_UNWRITABLE (EROFS), and --resume continues with no step missing or repeated', async () => {
    // The run folder's disk turns read-only: a bind mount of it is swapped for a read-only one
    // (a remount would wait for the files open for writing; those keep their old mount).
    const t = await failMidStep(
      (runs) => { sh('umount', '-l', runs); sh('mount', '--bind', '-o', 'ro', `${runs}.disk`, runs); },
      (runs) => { sh('umount', '-l', runs); sh('mount', '--bind', `${runs}.disk`, runs); },
      'EROFS',
    );
    mkdirSync(`${t.runs}.disk`);
    sh('mount', '--bind', `${t.runs}.disk`, t.runs);
    mounts.push(t.runs);
    await t.go();
  }, 240_000);

  it('full disk: exits within 10 s with CLAWGYM_RUN_DIR_UNWRITABLE (ENOSPC), and --resume continues with no step missing or repeated', async () => {
    const t = await failMidStep(
      (runs) => { spawnSync('dd', ['if=/dev/zero', `of=${join(runs, 'filler')}`, 'bs=1M']); },
      (runs) => rmSync(join(runs, 'filler')),
      'ENOSPC',
    );
    sh('mount', '-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', t.runs);
    mounts.push(t.runs);
    await t.go();
    expect(existsSync(join(t.runs, 'filler'))).toBe(false);
  }, 240_000);
});
