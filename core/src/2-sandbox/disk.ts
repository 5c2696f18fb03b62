/**
 * The disk limit of a local sandbox: what its processes can write (workspace, HOME, /tmp) lies
 * on one size-limited tmpfs mounted on `<sandbox folder>/disk`, so a command that writes past
 * the limit gets ENOSPC inside and the host's disk is never touched. The tmpfs is mounted on the
 * host (as root), before the workspace is laid out and before bubblewrap starts; its
 * `workspace` and `home` are bound where a sandbox's folders always are (`<folder>/workspace`,
 * `<folder>/home`), so the host (a verifier) reads them there, and its `tmp` is bound over the
 * sandbox's /tmp. Everything is unmounted when the sandbox is destroyed or swept.
 *
 * Why tmpfs, not a loop-mounted sparse file or quotas: a mount takes well under a millisecond
 * (no mkfs, no loop device, which containers often lack), quotas depend on the host's file
 * system, and tmpfs pages are only used as they are written — the limit is a cap, not a
 * reservation. What is written counts as memory (in the writer's memory cgroup, so a sandbox's
 * memory limit covers it too).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ClawGymError, ErrorCodes } from '../errors';

const run = promisify(execFile);
/** One set per process, however many times this module is loaded (a test runner loads it per file). */
const MOUNTED = Symbol.for('clawgym.sandbox.mountedDisks');
const MOUNT = '/usr/bin/mount';
const UMOUNT = '/usr/bin/umount';

/**
 * Sandbox folders of this process whose disk is mounted. Should the process exit without
 * destroying them (or closing its provider, whose warm pool holds some), their mounts are
 * detached as it exits; what is left of the folders is swept as any leftover is (`clawgym gc`).
 */
const shared = globalThis as { [MOUNTED]?: Set<string> };
const mounted = (shared[MOUNTED] ??= new Set<string>());

function detachAllAtExit(): void {
  for (const dir of mounted) spawnSync(UMOUNT, ['-l', ...['workspace', 'home', DISK_FOLDER].map((p) => join(dir, p))], { stdio: 'ignore' });
}

/** Note that sandbox folder `from` (with its mounts) is now `to` (the warm pool renames its slots). */
export function diskMoved(from: string, to: string): void {
  if (mounted.delete(from)) mounted.add(to);
}

/** The disk limit of a local sandbox when its options set none. */
export const DEFAULT_DISK_LIMIT = '1g';
/** The folder in a sandbox's folder that its tmpfs is mounted on. */
export const DISK_FOLDER = 'disk';

const UNITS: Record<string, number> = { '': 1024 ** 2, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/**
 * The sandbox option `diskLimit` in bytes: a size with a unit (`'512m'`, `'1g'`, `'1.5G'`,
 * `'2gib'`), a number of MiB, or `false`/`0` (no limit: undefined).
 */
export function parseDiskLimit(value: string | number | false | undefined): number | undefined {
  const v = value ?? DEFAULT_DISK_LIMIT;
  if (v === false || v === 0 || v === '0') return undefined;
  const m = typeof v === 'number' ? [String(v), String(v), ''] : /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(v);
  const bytes = m ? Math.floor(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!) : NaN;
  if (!Number.isFinite(bytes) || bytes < 1024 * 1024) {
    throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox option diskLimit ${JSON.stringify(value)} is not a size of at least 1 MiB`, {
      hint: "give a size such as '512m' or '2g' (a number is MiB), or false to write without a limit",
    });
  }
  return bytes;
}

/** A size in words (`1 GiB`, `512 MiB`). */
export function sizeInWords(bytes: number): string {
  if (bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3} GiB`;
  return `${Math.round(bytes / 1024 ** 2)} MiB`;
}

/**
 * Give sandbox folder `dir` its disk: a tmpfs of `bytes` on `dir/disk` holding `workspace`,
 * `home/tmp` and `tmp` (mode 1777), the first two bound on `dir/workspace` and `dir/home`.
 * One shell for the three mounts (a spawn each would cost more than the mounts).
 */
export async function mountDisk(dir: string, bytes: number): Promise<void> {
  const script = [
    'set -e', 'cd "$1"', `mkdir ${DISK_FOLDER} workspace home`,
    `${MOUNT} -t tmpfs -o "size=$2,mode=0755,nosuid,nodev" clawgym-sandbox ${DISK_FOLDER}`,
    `mkdir -p ${DISK_FOLDER}/workspace ${DISK_FOLDER}/home/tmp ${DISK_FOLDER}/tmp`, `chmod 1777 ${DISK_FOLDER}/tmp`,
    `${MOUNT} --bind ${DISK_FOLDER}/workspace workspace`, `${MOUNT} --bind ${DISK_FOLDER}/home home`,
  ].join('\n');
  if (mounted.size === 0 && !process.listeners('exit').some((l) => l.name === 'detachAllAtExit')) process.once('exit', detachAllAtExit);
  mounted.add(dir);
  await run('/bin/sh', ['-c', script, 'clawgym-disk', dir, String(bytes)]);
}

/**
 * Whether a tmpfs can be mounted here (root with CAP_SYS_ADMIN, the mount tool present): tried
 * once on a temporary folder. The reason when it cannot.
 */
export async function probeDiskMount(): Promise<{ ok: boolean; reason?: string }> {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'mounting a size-limited tmpfs needs root' };
  const dir = await mkdtemp(join(tmpdir(), 'clawgym-disk-probe-'));
  try {
    await run(MOUNT, ['-t', 'tmpfs', '-o', 'size=1m', 'clawgym-probe', dir]);
    await run(UMOUNT, [dir]);
    return { ok: true };
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    return { ok: false, reason: `mount -t tmpfs is not permitted here (${(err.stderr || err.message).trim().split('\n')[0]})` };
  } finally {
    await rmdir(dir).catch(() => undefined);
  }
}

/** Mount points at or under `dir` (from /proc/self/mountinfo), deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const decode = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  const points = info.split('\n').map((l) => l.split(' ')[4]).filter((p): p is string => p !== undefined).map(decode);
  return points.filter((p) => p === dir || p.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length);
}

/**
 * Unmount everything mounted at or under `dir` (a sandbox's disk), so removing the folder never
 * reaches into a mount. A mount still busy (a process of a fallback sandbox working in it) is
 * detached lazily: gone from the host's tree at once, freed when its last user ends.
 */
export async function unmountUnder(dir: string): Promise<string[]> {
  const points = await mountsUnder(dir);
  mounted.delete(dir);
  for (const p of points) {
    try { await run(UMOUNT, [p]); } catch { await run(UMOUNT, ['-l', p]).catch(() => undefined); }
  }
  return points;
}
