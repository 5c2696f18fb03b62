/**
 * cgroups (v1 or v2) for the local sandbox: which controllers this process can create child
 * groups in (found by trying), one group per sandbox with its limits (pids, memory without swap,
 * CPU quota), and killing and removing a group. A sandbox's processes join its groups before
 * anything of theirs runs, so everything they start is counted and can be killed at once.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxLimits } from '../contracts/sandbox';

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export type Controller = 'pids' | 'memory' | 'cpu';
const CONTROLLERS: Controller[] = ['pids', 'memory', 'cpu'];
export interface CgroupController { version: 1 | 2; parent: string }
/**
 * The controllers this process can create groups in; `cpuacct`: cgroup v1's CPU accounting
 * hierarchy (no limit: each sandbox's CPU seconds for the run's cost accounting; v2 keeps them in
 * every group's `cpu.stat`).
 */
export type Cgroups = Partial<Record<Controller, CgroupController>> & { cpuacct?: CgroupController };

const LIMIT_FILE: Record<1 | 2, Record<Controller, string>> = {
  1: { pids: 'pids.max', memory: 'memory.limit_in_bytes', cpu: 'cpu.cfs_quota_us' },
  2: { pids: 'pids.max', memory: 'memory.max', cpu: 'cpu.max' },
};
const UNLIMITED: Record<1 | 2, Record<Controller, string>> = {
  1: { pids: 'max', memory: '-1', cpu: '-1' },
  2: { pids: 'max', memory: 'max', cpu: 'max' },
};

/** Which controllers this process can create child cgroups in, found by trying. */
export function detectCgroups(): Cgroups {
  const found: Cgroups = {};
  let mounts: string[];
  let own: string[];
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n');
    own = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch { return found; }
  const v1 = new Map<string, string>();
  let v2Mount: string | undefined;
  for (const line of mounts) {
    const [, mnt, type, opts] = line.split(' ');
    if (!mnt || !opts) continue;
    if (type === 'cgroup') {
      for (const o of opts.split(',')) if (!v1.has(o)) v1.set(o, mnt);
    } else if (type === 'cgroup2' && !v2Mount) {
      v2Mount = mnt;
    }
  }
  const ownPath = (test: (ctrls: string) => boolean): string | undefined => {
    for (const line of own) {
      const a = line.indexOf(':');
      const b = line.indexOf(':', a + 1);
      if (a < 0 || b < 0) continue;
      if (test(line.slice(a + 1, b))) return line.slice(b + 1);
    }
    return undefined;
  };
  const ownV2 = ownPath((c) => c === '');
  for (const c of CONTROLLERS) {
    const mnt = v1.get(c);
    const p = ownPath((ctrls) => ctrls.split(',').includes(c));
    if (mnt && p !== undefined && probeCgroup(1, c, join(mnt, p))) { found[c] = { version: 1, parent: join(mnt, p) }; continue; }
    if (v2Mount && ownV2 !== undefined) {
      const parent = join(v2Mount, ownV2);
      if (enableV2(parent, c) && probeCgroup(2, c, parent)) found[c] = { version: 2, parent };
    }
  }
  const acct = v1.get('cpuacct');
  const acctPath = ownPath((ctrls) => ctrls.split(',').includes('cpuacct'));
  if (acct && acctPath !== undefined && probeAccounting(join(acct, acctPath))) found.cpuacct = { version: 1, parent: join(acct, acctPath) };
  return found;
}

/** Whether a v1 cpuacct group can be made under `parent` and counts CPU time. */
function probeAccounting(parent: string): boolean {
  const dir = join(parent, `clawgym-probe-${process.pid}-${randomBytes(3).toString('hex')}`);
  try { mkdirSync(dir); } catch { return false; }
  try {
    return /^\d+\s*$/.test(readFileSync(join(dir, 'cpuacct.usage'), 'utf8'));
  } catch { return false; } finally {
    try { rmdirSync(dir); } catch { /* best effort */ }
  }
}

/** The CPU accounting group of cgroup `name`, where v1's cpuacct is mounted (see {@link Cgroups}). */
export function accountingCgroup(cgroups: Cgroups, name: string): string | undefined {
  return cgroups.cpuacct ? join(cgroups.cpuacct.parent, name) : undefined;
}

/**
 * Which controllers the kernel has enabled (`/proc/cgroups`, else the cgroup v2 root's
 * `cgroup.controllers`), whether or not this process may create groups in them: what a
 * container engine running as root on this machine can use to enforce limits.
 */
export function kernelControllers(files: { procCgroups?: string; v2Controllers?: string } = {}): Record<Controller, boolean> {
  const found: Record<Controller, boolean> = { pids: false, memory: false, cpu: false };
  let text: string | undefined;
  try { text = readFileSync(files.procCgroups ?? '/proc/cgroups', 'utf8'); } catch { /* absent on some v2-only kernels */ }
  if (text !== undefined) {
    for (const line of text.split('\n')) {
      const [name, , , enabled] = line.trim().split(/\s+/);
      if (CONTROLLERS.includes(name as Controller) && enabled === '1') found[name as Controller] = true;
    }
    return found;
  }
  try {
    const v2 = readFileSync(files.v2Controllers ?? '/sys/fs/cgroup/cgroup.controllers', 'utf8').split(/\s+/);
    for (const c of CONTROLLERS) found[c] = v2.includes(c);
  } catch { /* no cgroups at all */ }
  return found;
}

function enableV2(parent: string, c: Controller): boolean {
  try {
    if (!readFileSync(join(parent, 'cgroup.controllers'), 'utf8').split(/\s+/).includes(c)) return false;
    if (readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes(c)) return true;
    writeFileSync(join(parent, 'cgroup.subtree_control'), `+${c}`);
    return true;
  } catch { return false; }
}

function probeCgroup(version: 1 | 2, c: Controller, parent: string): boolean {
  const dir = join(parent, `clawgym-probe-${process.pid}-${randomBytes(3).toString('hex')}`);
  try { mkdirSync(dir); } catch { return false; }
  try {
    writeFileSync(join(dir, LIMIT_FILE[version][c]), UNLIMITED[version][c]);
    return true;
  } catch { return false; } finally {
    try { rmdirSync(dir); } catch { /* best effort */ }
  }
}

/** Which controllers a sandbox with `limits` needs a cgroup in (pids always). */
export function controllersFor(limits: SandboxLimits): Controller[] {
  return ['pids', ...(limits.memoryMb !== undefined ? ['memory' as const] : []), ...(limits.cpus !== undefined ? ['cpu' as const] : [])];
}

/** Create this sandbox's cgroups and set its limits; returns their folders (write a pid to each `cgroup.procs`). */
export async function createCgroups(cgroups: Cgroups, name: string, limits: Required<Pick<SandboxLimits, 'pids'>> & SandboxLimits): Promise<string[]> {
  const dirs = await makeCgroups(cgroups, name, controllersFor(limits));
  await writeLimits(cgroups, name, limits);
  return dirs;
}

/** Create cgroup `name` under each of `controllers` this machine can limit; returns the folders. */
export async function makeCgroups(cgroups: Cgroups, name: string, controllers: Controller[]): Promise<string[]> {
  const dirs = new Set<string>();
  for (const c of controllers) {
    const ctl = cgroups[c];
    if (!ctl) continue;
    const dir = join(ctl.parent, name);
    await mkdir(dir).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
    dirs.add(dir);
  }
  return [...dirs];
}

/** Set `limits` on cgroup `name` (made by {@link makeCgroups} for at least the controllers they need). */
export async function writeLimits(cgroups: Cgroups, name: string, limits: Required<Pick<SandboxLimits, 'pids'>> & SandboxLimits): Promise<void> {
  const at = (c: Controller): [string, 1 | 2] | undefined => (cgroups[c] ? [join(cgroups[c]!.parent, name), cgroups[c]!.version] : undefined);
  const pids = at('pids');
  if (pids) await writeFile(join(pids[0], 'pids.max'), String(limits.pids));
  if (limits.memoryMb !== undefined) {
    const m = at('memory');
    const bytes = String(Math.floor(limits.memoryMb * MiB));
    if (m?.[1] === 1) {
      await writeFile(join(m[0], 'memory.limit_in_bytes'), bytes);
      await writeFile(join(m[0], 'memory.memsw.limit_in_bytes'), bytes).catch(() => undefined); // no swap accounting: fine
    } else if (m) {
      await writeFile(join(m[0], 'memory.max'), bytes);
      await writeFile(join(m[0], 'memory.swap.max'), '0').catch(() => undefined);
    }
  }
  if (limits.cpus !== undefined) {
    const cpu = at('cpu');
    if (cpu?.[1] === 1) {
      const period = Number((await readFile(join(cpu[0], 'cpu.cfs_period_us'), 'utf8').catch(() => '100000')).trim()) || 100000;
      await writeFile(join(cpu[0], 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpus * period))));
    } else if (cpu) {
      await writeFile(join(cpu[0], 'cpu.max'), `${Math.max(1000, Math.round(limits.cpus * 100000))} 100000`);
    }
  }
}

/** SIGKILL every process in a cgroup once (no waiting); returns the pids signalled. */
export async function signalCgroup(dir: string): Promise<number[]> {
  await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined); // v2 (5.14+): atomic
  let procs: number[];
  try { procs = (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean).map(Number); } catch { return []; }
  for (const pid of procs) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  return procs;
}

/** SIGKILL every process in a cgroup until it is empty; returns the pids killed. */
export async function killCgroup(dir: string): Promise<number[]> {
  const killed = new Set<number>();
  for (let i = 0; i < 100; i++) {
    const procs = await signalCgroup(dir);
    if (procs.length === 0) break;
    for (const pid of procs) killed.add(pid);
    await sleep(10);
  }
  return [...killed];
}

/** Remove an (emptied) cgroup, retrying while its last processes exit; false when it was not there. */
export async function removeCgroup(dir: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try { await rmdir(dir); return true; } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      await sleep(20);
    }
  }
  return false;
}

/**
 * The shell that joins the sandbox's cgroups before exec'ing the rest of `cmd`: everything
 * started from there on inherits them.
 */
export function joinCgroups(cgroups: string[], cmd: string[]): string[] {
  if (!cgroups.length) return cmd;
  const joinScript = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  return ['/bin/sh', '-c', joinScript, 'clawgym-cgroup', String(cgroups.length), ...cgroups.map((c) => `${c}/cgroup.procs`), ...cmd];
}

/**
 * CPU seconds used by the processes of a sandbox's cgroups so far: cgroup v2's `cpu.stat`
 * (`usage_usec`, kept in every v2 group), or v1's `cpuacct.usage` (nanoseconds) where cpuacct is
 * mounted with cpu. Undefined when none of its groups accounts CPU time.
 */
export async function cgroupCpuSeconds(dirs: readonly string[]): Promise<{ cpuSeconds: number; source: string } | undefined> {
  for (const dir of dirs) {
    const v2 = await readFile(join(dir, 'cpu.stat'), 'utf8').catch(() => '');
    const usec = /^usage_usec (\d+)$/m.exec(v2)?.[1];
    if (usec !== undefined) return { cpuSeconds: Number(usec) / 1e6, source: 'cgroup v2 cpu.stat' };
    const v1 = await readFile(join(dir, 'cpuacct.usage'), 'utf8').catch(() => '');
    if (/^\d+\s*$/.test(v1)) return { cpuSeconds: Number(v1) / 1e9, source: 'cgroup v1 cpuacct.usage' };
  }
  return undefined;
}
