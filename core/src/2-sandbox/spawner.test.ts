import { readFileSync } from 'node:fs';
import { spawnHere, startProcess, type SpawnSpec } from './spawner';

const spec = (cmd: string[], over: Partial<SpawnSpec> = {}): SpawnSpec => ({ cmd, env: { PATH: '/usr/bin:/bin' }, stdin: '', maxBytes: 1 << 20, ...over });
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);

describe.each([['the helper', startProcess], ['this process', spawnHere]] as const)('starting processes from %s', (from, start) => {
  it('runs a command with its env, cwd and stdin, and returns its exit status and output', async () => {
    const p = start(spec(['/bin/sh', '-c', 'cat; echo "$FOO" >&2; pwd; sleep 0.2; exit 3'], { env: { FOO: 'bar' }, cwd: '/tmp', stdin: 'in\n' }));
    const pid = await p.pid;
    expect(pid).toBeGreaterThan(0);
    // Started by the helper, not by this (big) process: fork's cost lands elsewhere.
    if (from === 'the helper') expect(parentOf(pid!)).not.toBe(process.pid);
    else expect(parentOf(pid!)).toBe(process.pid);
    const r = await p.done;
    expect(r).toMatchObject({ code: 3, signal: null, stdout: 'in\n/tmp\n', stderr: 'bar\n' });
  });

  it('counts output past maxBytes but keeps only what fits', async () => {
    const r = await start(spec(['/bin/sh', '-c', 'head -c 5000 /dev/zero'], { maxBytes: 1000 })).done;
    expect(r.outBytes).toBe(5000);
    expect(r.stdout.length).toBeLessThanOrEqual(1000);
  });

  it('says why a command could not start', async () => {
    const r = await start(spec(['/nonexistent/bin'])).done;
    expect(r.code).toBe(127);
    expect(r.error).toMatch(/ENOENT/);
  });

  it('once killed, a stray that holds the pipes open delays the result by about a second, not until it exits', async () => {
    const p = start(spec(['/bin/sh', '-c', 'sleep 30 & echo started; wait']));
    const pid = (await p.pid)!;
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    process.kill(pid, 'SIGKILL'); // the shell only: its sleep keeps stdout open
    p.killed();
    const r = await p.done;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout).toBe('started\n');
    try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
  });
});

it('when the helper dies, its pending commands fail with a reason, and the next command starts a new helper', async () => {
  const p = startProcess(spec(['/bin/sleep', '30']));
  const pid = (await p.pid)!;
  const helper = parentOf(pid);
  expect(helper).not.toBe(process.pid);
  process.kill(helper, 'SIGKILL');
  const r = await p.done;
  expect(r.code).toBe(127);
  expect(r.error).toContain('went away');
  process.kill(-pid, 'SIGKILL'); // detached: it outlived its helper
  const next = await startProcess(spec(['/bin/echo', 'again'])).done;
  expect(next).toMatchObject({ code: 0, stdout: 'again\n' });
});
