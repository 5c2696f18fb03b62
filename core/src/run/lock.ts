import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import { randomHex } from '../util/random-hex';

/** The lock file in a run folder: who writes into it now. */
export const LOCK_FILE = 'run.lock';

/** What a lock file holds. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the holder took the lock (ISO time). */
  started: string;
  /** The command that holds it (`run`, `run --resume`, `eval`, `sft`, `serve`). */
  command: string;
  /** The holder's start time in clock ticks since boot (Linux), so a reused PID is not taken for it. */
  procStart?: string;
}

/** A lock this process holds; `release` removes it (once; also on exit if never called). */
export interface RunLock {
  path: string;
  /** The dead holder whose lock was taken over, if any. */
  tookOverFrom?: LockHolder;
  release(): Promise<void>;
}

/** Field 22 of /proc/<pid>/stat (the process's start time), or undefined where there is no /proc. */
function procStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the holder's process still runs (on this host; another host's holder counts as alive). */
function alive(h: LockHolder): boolean {
  if (h.host !== hostname()) return true;
  if (h.pid === process.pid) return true;
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // A PID the kernel gave to a newer process is not the holder.
  const now = procStart(h.pid);
  return !(h.procStart && now && now !== h.procStart);
}

async function readHolder(path: string): Promise<LockHolder | undefined> {
  try {
    const h = JSON.parse(await readFile(path, 'utf8')) as LockHolder;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? h : undefined;
  } catch {
    return undefined;
  }
}

export const describeHolder = (h: LockHolder) => `\`clawgym ${h.command}\` (PID ${h.pid} on ${h.host}, since ${h.started})`;

/**
 * Take the lock on a run folder for this process, or refuse at once (CLAWGYM_RUN_LOCKED) naming
 * the process that holds it: two processes writing one run folder interleave steps, replace each
 * other's proxy socket and mix their records. The lock is made whole elsewhere and linked into
 * place, so no one reads a half-written lock; a holder that died (same host, PID gone or reused)
 * is taken over, and `note` says so.
 */
export async function lockRunDir(runDir: string, command: string, note: (s: string) => void = () => {}): Promise<RunLock> {
  await mkdir(runDir, { recursive: true });
  const path = join(runDir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, host: hostname(), started: new Date().toISOString(), command, procStart: procStart(process.pid) };
  const tmp = `${path}.${process.pid}.${randomHex(4)}`;
  await writeFile(tmp, `${JSON.stringify(me)}\n`);
  let tookOverFrom: LockHolder | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(tmp, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (attempt > 10) throw new ClawGymError(ErrorCodes.RUN_LOCKED, `could not take the lock ${path}: other processes keep taking it`, { hint: 'run one command on a run folder at a time' });
      }
      const holder = await readHolder(path);
      if (holder && alive(holder)) {
        throw new ClawGymError(ErrorCodes.RUN_LOCKED, `the run folder ${runDir} is in use by ${describeHolder(holder)}`, {
          hint: holder.host === hostname()
            ? `wait for it to end or stop it (kill -INT ${holder.pid}), or give this one another --name`
            : `it runs on another host; if it is gone for good, remove ${path}`,
        });
      }
      // Dead (or unreadable): move it aside; if what moved is a live holder's (one that took over
      // meanwhile), put it back and look again.
      const aside = `${path}.stale.${process.pid}`;
      try { await rename(path, aside); } catch { continue; }
      const moved = await readHolder(aside);
      if (moved && alive(moved)) {
        await link(aside, path).catch(() => undefined);
        await unlink(aside).catch(() => undefined);
        continue;
      }
      await unlink(aside).catch(() => undefined);
      tookOverFrom = moved;
      note(tookOverFrom
        ? `taking over the lock of ${describeHolder(tookOverFrom)}, which is no longer running\n`
        : `taking over an unreadable lock in ${runDir}\n`);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  let released = false;
  const onExit = () => { if (!released) try { if (ours()) unlinkSync(path); } catch { /* gone already */ } };
  const ours = () => { try { return (JSON.parse(readFileSync(path, 'utf8')) as LockHolder).pid === process.pid; } catch { return false; } };
  process.on('exit', onExit);
  return {
    path,
    tookOverFrom,
    async release() {
      if (released) return;
      released = true;
      process.off('exit', onExit);
      if (ours()) await unlink(path).catch(() => undefined);
    },
  };
}
