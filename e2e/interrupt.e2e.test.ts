import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bubblewrapPath } from '@clawgym/core';
import { describeIf } from '@clawgym/core/testing';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const repo = resolve(__dirname, '..');
const script = join(__dirname, 'fixtures', 'interruptible-run.js');
const sandboxRoot = join(tmpdir(), 'clawgym-sandboxes');

/** Processes still carrying a sandbox marker of this run. */
function markedProcesses(runId: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try { return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`/${runId}/`) ? [Number(pid)] : []; } catch { return []; }
  });
}

function start(runId: string) {
  const runDir = tmp('interrupt-run-');
  const child = spawn(process.execPath, [script, runId, runDir], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const running = new Promise<void>((ok, fail) => {
    child.stdout.on('data', () => { if (out.includes('RUNNING')) ok(); });
    child.on('exit', () => fail(new Error(`exited early: ${out}`)));
  });
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  return { child, runDir, running, exited, output: () => out };
}

describeIf(bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'interrupting a run', () => {
  it('first SIGINT: no new rollouts, harnesses killed, sandboxes removed, records flushed', async () => {
    const runId = `sigint-${process.pid}`;
    const run = start(runId);
    await run.running;
    expect(markedProcesses(runId).length).toBeGreaterThan(0);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);
    const out = run.output();
    expect(out).toContain('SIGINT: stopping');
    const done = JSON.parse(/DONE (.*)/.exec(out)![1]!) as [string, string, string, number][];
    expect(done.map((d) => d[0])).toEqual(['r0', 'r1']); // r2 and r3 never started
    expect(done.every((d) => d[1] === 'infra-error' && d[2] === 'cancelled' && d[3] === 1)).toBe(true);
    expect(markedProcesses(runId)).toEqual([]);
    expect(existsSync(join(sandboxRoot, runId)) ? readdirSync(join(sandboxRoot, runId)) : []).toEqual([]);
    for (const r of ['r0', 'r1']) expect(readFileSync(join(run.runDir, 'calls', `${r}.jsonl`), 'utf8').trim().split('\n')).toHaveLength(1);
  }, 60_000);

  it('after SIGKILL, `clawgym gc` removes the processes and sandboxes left behind', async () => {
    const runId = `sigkill-${process.pid}`;
    const run = start(runId);
    await run.running;
    run.child.kill('SIGKILL');
    await run.exited;
    // The two rollouts' sandboxes, beside the warm pool's spare holders (dot-named): all left for gc.
    expect(readdirSync(join(sandboxRoot, runId)).filter((n) => !n.startsWith('.'))).toEqual(['r0', 'r1']);
    const gc = spawnSync(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'gc'], { cwd: repo, encoding: 'utf8' });
    expect(gc.status).toBe(0);
    expect(gc.stdout).toMatch(/^local: removed \d+/m);
    expect(gc.stdout).toContain(`${runId}/r0`);
    expect(markedProcesses(runId)).toEqual([]);
    expect(existsSync(join(sandboxRoot, runId)) ? readdirSync(join(sandboxRoot, runId)) : []).toEqual([]);
  }, 60_000);
});
