import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes } from '../errors';
import { LOCK_FILE, lockRunDir } from './lock';

describe('lockRunDir: one process a run folder', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'clawgym-lock-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second holder at once, naming the first (PID, host, start, command); free again after release', async () => {
    const first = await lockRunDir(dir, 'run');
    const holder = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'));
    expect(holder).toMatchObject({ pid: process.pid, host: hostname(), command: 'run' });
    expect(new Date(holder.started).getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Another process's view: the same lock file, held by a live PID (this one's parent stands in).
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...holder, pid: process.ppid, procStart: undefined }));
    const second = lockRunDir(dir, 'run --resume');
    await expect(second).rejects.toMatchObject({ code: ErrorCodes.RUN_LOCKED, message: expect.stringContaining(`\`clawgym run\` (PID ${process.ppid} on ${hostname()}, since ${holder.started})`) });
    // Release removes only this process's lock, never another's.
    await first.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    rmSync(join(dir, LOCK_FILE));
    const third = await lockRunDir(dir, 'eval');
    await third.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('takes over the lock of a holder that died, saying so', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(dead.stdout);
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, host: hostname(), started: '2026-01-01T00:00:00.000Z', command: 'run' }));
    const notes: string[] = [];
    const lock = await lockRunDir(dir, 'run --resume', (s) => notes.push(s));
    expect(lock.tookOverFrom?.pid).toBe(pid);
    expect(notes.join('')).toContain(`taking over the lock of \`clawgym run\` (PID ${pid} on ${hostname()}, since 2026-01-01T00:00:00.000Z), which is no longer running`);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('does not take a reused PID for the holder, and leaves another host\'s lock alone', async () => {
    // A live PID (the parent) with another start time: the kernel gave the holder's PID away.
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, host: hostname(), started: 'x', command: 'serve', procStart: '1' }));
    const lock = await lockRunDir(dir, 'run');
    expect(lock.tookOverFrom?.pid).toBe(process.ppid);
    await lock.release();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 1, host: 'elsewhere', started: 'x', command: 'sft' }));
    await expect(lockRunDir(dir, 'run')).rejects.toMatchObject({ code: ErrorCodes.RUN_LOCKED, hint: expect.stringContaining(`remove ${join(dir, LOCK_FILE)}`) });
  });
});
