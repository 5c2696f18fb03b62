/**
 * The `local` sandbox provider: bubblewrap where it is installed (a read-only system, a writable
 * workspace and HOME, every namespace unshared, the model reached through the proxy's Unix
 * socket), plain processes in labelled temp folders otherwise (network still isolated with
 * `unshare -n` where possible, and a loud warning about what is missing).
 *
 * Limits: cgroups (v1 or v2) where this process can create them — pids, memory, CPU quota —
 * otherwise rlimits through `prlimit` (RLIMIT_NPROC, RLIMIT_AS, RLIMIT_CPU); wall time by
 * timers that kill everything the sandbox started.
 *
 * Every sandbox lives in `<root>/<runId>/<rolloutId>/` with an `owner.json` (runner pid and
 * start time, cgroups), and every process in it inherits `CLAWGYM_SANDBOX=<that folder>`:
 * `sweep()` finds what a killed runner left behind by both.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, readdir, readFile, realpath, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, posix, relative, resolve } from 'node:path';
import type { ExecOptions, ExecResult, Sandbox, SandboxLimits, SandboxProvider, SandboxSpec, SweepReport } from '../contracts/sandbox';
import { refuseEnvironment } from './environment';
import { netnsAvailable, SANDBOX_PROXY_PORT } from './netns';
import { ClawGymError, ErrorCodes } from '../errors';
import { ownerAlive, startTimeOf } from './owner';
import { startProcess, warmSpawner } from './spawner';

/** The workspace as processes in a bubblewrap sandbox see it. */
export const SANDBOX_WORKSPACE = '/workspace';
/** HOME as processes in a bubblewrap sandbox see it (TMPDIR is `<HOME>/tmp`). */
export const SANDBOX_HOME = '/home/agent';
/** Where the proxy's Unix socket is bound inside a bubblewrap sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/clawgym/proxy.sock';
/** Environment variable every sandboxed process inherits: the sandbox's host folder. */
export const SANDBOX_MARKER_ENV = 'CLAWGYM_SANDBOX';
const EXEC_MARKER_ENV = 'CLAWGYM_SANDBOX_EXEC';
/** Default root of the labelled sandbox folders. */
export const DEFAULT_SANDBOX_ROOT = join(tmpdir(), 'clawgym-sandboxes');
/** Process (task) limit when the spec sets none. Threads count too: one Node.js process is ~10. */
export const DEFAULT_PIDS_LIMIT = 1024;

const NETNS_RUN = resolve(__dirname, '..', '..', 'dist', 'sandbox', 'netns-run.js');
const PRLIMIT = '/usr/bin/prlimit';
const IP = '/usr/sbin/ip';
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]*$/;
const MiB = 1024 * 1024;

export interface LocalSandboxOptions {
  /** Folder under which sandboxes live (`<root>/<runId>/<rolloutId>`); default {@link DEFAULT_SANDBOX_ROOT}. */
  root?: string;
  /** Use plain processes even where bubblewrap is installed. */
  forceFallback?: boolean;
  /** Where warnings go (default `console.warn`). */
  log?: (msg: string) => void;
  /** Enforce limits with cgroups where this process can create them (default true); false: rlimits only. */
  cgroups?: boolean;
  /**
   * Run sandboxes as plain processes where bubblewrap is missing (default false: refused). They
   * then share the host's filesystem — a sandboxed command can read and write whatever this
   * user can, other sandboxes' workspaces included — though, as root, each still gets its own
   * pid namespace, /proc and network.
   */
  allowUnisolated?: boolean;
}

/** How each limit is enforced here, in words (`not enforced: <why>` when it is not). */
export interface LimitEnforcement {
  pids: string;
  memory: string;
  cpus: string;
  wall: string;
}

/** The `local` provider, plus what it can tell about its own enforcement. */
export interface LocalSandboxProvider extends SandboxProvider {
  /** How each limit is enforced on this machine. */
  limitEnforcement(): Promise<LimitEnforcement>;
  /** `bubblewrap`, or `fallback` (plain processes). */
  mode(): Promise<'bubblewrap' | 'fallback'>;
}

/** `bwrap` on PATH (or in /usr/bin), if installed. */
export function bubblewrapPath(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/bin', '/usr/local/bin'];
  for (const d of dirs) if (existsSync(join(d, 'bwrap'))) return join(d, 'bwrap');
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// cgroups

type Controller = 'pids' | 'memory' | 'cpu';
const CONTROLLERS: Controller[] = ['pids', 'memory', 'cpu'];
interface CgroupController { version: 1 | 2; parent: string }
type Cgroups = Partial<Record<Controller, CgroupController>>;

const LIMIT_FILE: Record<1 | 2, Record<Controller, string>> = {
  1: { pids: 'pids.max', memory: 'memory.limit_in_bytes', cpu: 'cpu.cfs_quota_us' },
  2: { pids: 'pids.max', memory: 'memory.max', cpu: 'cpu.max' },
};
const UNLIMITED: Record<1 | 2, Record<Controller, string>> = {
  1: { pids: 'max', memory: '-1', cpu: '-1' },
  2: { pids: 'max', memory: 'max', cpu: 'max' },
};

/** Which controllers this process can create child cgroups in, found by trying. */
function detectCgroups(): Cgroups {
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

/** Create this sandbox's cgroups and set its limits; returns their folders (write a pid to each `cgroup.procs`). */
async function createCgroups(cgroups: Cgroups, name: string, limits: Required<Pick<SandboxLimits, 'pids'>> & SandboxLimits): Promise<string[]> {
  const dirs = new Set<string>();
  const make = async (c: Controller): Promise<[string, 1 | 2] | undefined> => {
    const ctl = cgroups[c];
    if (!ctl) return undefined;
    const dir = join(ctl.parent, name);
    await mkdir(dir).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
    dirs.add(dir);
    return [dir, ctl.version];
  };
  const pids = await make('pids');
  if (pids) await writeFile(join(pids[0], 'pids.max'), String(limits.pids));
  if (limits.memoryMb !== undefined) {
    const m = await make('memory');
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
    const cpu = await make('cpu');
    if (cpu?.[1] === 1) {
      const period = Number((await readFile(join(cpu[0], 'cpu.cfs_period_us'), 'utf8').catch(() => '100000')).trim()) || 100000;
      await writeFile(join(cpu[0], 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpus * period))));
    } else if (cpu) {
      await writeFile(join(cpu[0], 'cpu.max'), `${Math.max(1000, Math.round(limits.cpus * 100000))} 100000`);
    }
  }
  return [...dirs];
}

/** SIGKILL every process in a cgroup until it is empty; returns the pids killed. */
async function killCgroup(dir: string): Promise<number[]> {
  const killed = new Set<number>();
  await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined); // v2 (5.14+): atomic
  for (let i = 0; i < 100; i++) {
    let procs: number[];
    try { procs = (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean).map(Number); } catch { break; }
    if (procs.length === 0) break;
    for (const pid of procs) { killed.add(pid); try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await sleep(10);
  }
  return [...killed];
}

async function removeCgroup(dir: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try { await rmdir(dir); return true; } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      await sleep(20);
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// processes

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Processes whose environment holds `CLAWGYM_SANDBOX=<dir>` (and the exec marker, if given). */
async function markedProcesses(match: (value: string, env: string[]) => boolean): Promise<{ pid: number; value: string }[]> {
  const out: { pid: number; value: string }[] = [];
  let entries: string[];
  try { entries = await readdir('/proc'); } catch { return out; }
  const prefix = `${SANDBOX_MARKER_ENV}=`;
  await Promise.all(entries.map(async (name) => {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return;
    let env: string[];
    try { env = (await readFile(`/proc/${pid}/environ`, 'latin1')).split('\0'); } catch { return; }
    const entry = env.find((e) => e.startsWith(prefix));
    if (entry && match(entry.slice(prefix.length), env)) out.push({ pid, value: entry.slice(prefix.length) });
  }));
  return out;
}

async function killMarked(match: (value: string, env: string[]) => boolean): Promise<number[]> {
  const killed: number[] = [];
  for (let round = 0; round < 5; round++) {
    const found = await markedProcesses(match);
    if (found.length === 0) break;
    for (const { pid } of found) { killed.push(pid); try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await sleep(20);
  }
  return [...new Set(killed)];
}

interface OwnerFile {
  pid: number;
  pidStart?: string;
  host: string;
  runId: string;
  rolloutId: string;
  created: string;
  mode: 'bubblewrap' | 'fallback';
  cgroups: string[];
}

/** rm -rf that also copes with folders a sandboxed process made read-only. */
async function removeTree(dir: string): Promise<void> {
  try { await rm(dir, { recursive: true, force: true }); return; } catch { /* fix permissions below */ }
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p).catch(() => undefined);
    if (!st?.isDirectory()) return;
    await chmod(p, 0o700).catch(() => undefined);
    for (const e of await readdir(p).catch(() => [] as string[])) await walk(join(p, e));
  };
  await walk(dir);
  await rm(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// the provider

interface Machine {
  mode: 'bubblewrap' | 'fallback';
  bwrap?: string;
  bwrapVersion?: string;
  /** Why bubblewrap is not used (fallback only). */
  whyFallback?: string;
  netns: { ok: boolean; reason?: string };
  cgroups: Cgroups;
  prlimit: boolean;
  root: boolean;
  systemArgs: string[];
}

function systemBinds(): string[] {
  const a = ['--ro-bind', '/usr', '/usr'];
  for (const p of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(p), p);
      else if (st.isDirectory()) a.push('--ro-bind', p, p);
    } catch { /* not on this system */ }
  }
  a.push('--ro-bind', '/etc', '/etc');
  // Root inside maps to root outside: hide the host's password hashes and private keys.
  for (const p of ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-']) if (existsSync(p)) a.push('--ro-bind', '/dev/null', p);
  if (existsSync('/etc/ssl/private')) a.push('--tmpfs', '/etc/ssl/private');
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  return a;
}

function run(cmd: string, args: string[], timeoutMs = 5000): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    let out = '';
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: {} });
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', (e) => { clearTimeout(t); done({ code: 127, out: e.message }); });
    child.on('close', (code) => { clearTimeout(t); done({ code, out: out.trim() }); });
  });
}

async function detectMachine(options: LocalSandboxOptions): Promise<Machine> {
  const root = process.getuid?.() === 0;
  const common = {
    netns: netnsAvailable(),
    cgroups: options.cgroups === false ? {} : detectCgroups(),
    prlimit: existsSync(PRLIMIT),
    root,
    systemArgs: systemBinds(),
  };
  const bwrap = bubblewrapPath();
  if (options.forceFallback) return { ...common, mode: 'fallback', whyFallback: 'forceFallback is set' };
  if (!bwrap) return { ...common, mode: 'fallback', whyFallback: 'bubblewrap (bwrap) is not installed' };
  const probe = await run(bwrap, [...common.systemArgs, '--unshare-all', '--die-with-parent', '--new-session', '--', '/usr/bin/true']);
  if (probe.code !== 0) return { ...common, mode: 'fallback', whyFallback: `bubblewrap is installed but cannot create a sandbox here (${probe.out || `exit ${probe.code}`})` };
  const version = await run(bwrap, ['--version']);
  return { ...common, mode: 'bubblewrap', bwrap, bwrapVersion: version.code === 0 ? version.out : 'bubblewrap' };
}

function enforcementOf(m: Machine): LimitEnforcement {
  const cg = (c: Controller, what: string) => `cgroup v${m.cgroups[c]!.version} ${what}`;
  const noCgroup = m.root ? 'no writable cgroup for it' : 'no writable cgroup (not root)';
  return {
    pids: m.cgroups.pids ? cg('pids', 'pids.max')
      : m.prlimit && !m.root
        ? (m.mode === 'bubblewrap' ? 'RLIMIT_NPROC (counted per sandbox: own user namespace)' : 'RLIMIT_NPROC, only when limits.pids is set (counts all of this user\'s processes)')
        : `not enforced: ${m.root ? 'root ignores RLIMIT_NPROC' : 'prlimit is missing'} and ${noCgroup}`,
    memory: m.cgroups.memory ? cg('memory', 'limit (resident memory, no swap)')
      : m.prlimit ? 'RLIMIT_AS per process (virtual memory: Node.js needs ~1 GiB of it to start)' : `not enforced: prlimit is missing and ${noCgroup}`,
    cpus: m.cgroups.cpu ? cg('cpu', 'CFS quota')
      : m.prlimit ? 'RLIMIT_CPU per process = cpus x wall seconds, only with wallMs (a share needs a cgroup)' : `not enforced: prlimit is missing and ${noCgroup}`,
    wall: 'timer: SIGKILL to every process of the sandbox',
  };
}

function describeMachine(m: Machine): string {
  const e = enforcementOf(m);
  const limits = `limits: pids ${e.pids}; memory ${e.memory}; cpus ${e.cpus}; wall ${e.wall}`;
  if (m.mode === 'bubblewrap') {
    return `${m.bwrapVersion}: all namespaces unshared (network: own loopback + model socket only), read-only /usr and /etc, writable workspace and HOME only, env cleared; ${limits}`;
  }
  const net = m.netns.ok ? 'network isolated (unshare -n: own loopback + model socket only)' : `NO network isolation (${m.netns.reason})`;
  return `fallback (${m.whyFallback}): plain processes, NO filesystem isolation, own temp workspace and HOME, env scrubbed, ${net}; ${limits}`;
}

function fallbackWarning(m: Machine): string {
  const lines = [
    `clawgym: local sandbox WITHOUT FILESYSTEM ISOLATION (${m.whyFallback}).`,
    'Sandboxed processes run as this user on the host filesystem: they can read and write anything it can, outside their workspace too.',
    m.netns.ok ? 'Network is still isolated (unshare -n: only the model endpoint is reachable).' : `Network is NOT isolated either: ${m.netns.reason}.`,
    'Install bubblewrap for real isolation: apt-get install bubblewrap (dnf install bubblewrap; pacman -S bubblewrap).',
  ];
  return lines.join('\n  ');
}

/** Check an id used as a folder name. */
function checkId(kind: string, id: string): void {
  if (!ID_PATTERN.test(id) || id.includes('..')) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox ${kind} ${JSON.stringify(id)} must match ${ID_PATTERN} (it names a folder)`);
}

/**
 * The `local` sandbox provider (see the file comment): bubblewrap where installed, plain
 * processes with a loud warning otherwise.
 */
export function localSandboxProvider(options: LocalSandboxOptions = {}): LocalSandboxProvider {
  const root = resolve(options.root ?? DEFAULT_SANDBOX_ROOT);
  // eslint-disable-next-line no-console
  const log = options.log ?? ((msg: string) => console.warn(msg));
  let machine: Promise<Machine> | undefined;
  let warned = false;
  const getMachine = () => (machine ??= detectMachine(options));

  return {
    name: 'local',
    async describeIsolation() { return describeMachine(await getMachine()); },
    async limitEnforcement() { return enforcementOf(await getMachine()); },
    async mode() { return (await getMachine()).mode; },

    async create(spec) {
      refuseEnvironment(spec, 'local');
      const m = await getMachine();
      if (m.mode === 'fallback' && !options.allowUnisolated) {
        throw new ClawGymError(ErrorCodes.SANDBOX_UNISOLATED, `the local sandbox cannot isolate files here (${m.whyFallback}): a sandboxed harness could read and write the host's files and other sandboxes' workspaces`, {
          hint: 'Install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap; pacman -S bubblewrap), use the docker sandbox, or accept plain processes with sandbox: { use: \'local\', options: { allowUnisolated: true } }.',
        });
      }
      if (!warned) {
        warned = true;
        if (m.mode === 'fallback') log(fallbackWarning(m));
        const { pids } = enforcementOf(m);
        if (pids.startsWith('not enforced')) log(`clawgym: local sandbox process limit ${pids}`);
      }
      return createLocalSandbox(spec, m, root);
    },

    async sweep(runId) {
      if (runId !== undefined) checkId('runId', runId);
      const removed: string[] = [];
      const runs = runId !== undefined ? [runId] : await readdir(root).catch(() => [] as string[]);
      const live = new Set<string>();
      for (const run of runs) {
        const runDir = join(root, run);
        for (const rollout of await readdir(runDir).catch(() => [] as string[])) {
          const dir = join(runDir, rollout);
          const owner = await readFile(join(dir, 'owner.json'), 'utf8').then((t) => JSON.parse(t) as OwnerFile).catch(() => undefined);
          if (owner ? ownerAlive(owner) : await isFresh(dir)) { live.add(dir); continue; }
          for (const cg of owner?.cgroups ?? []) for (const pid of await killCgroup(cg)) removed.push(`process ${pid}`);
          for (const pid of await killMarked((v) => v === dir)) removed.push(`process ${pid}`);
          for (const cg of owner?.cgroups ?? []) if (await removeCgroup(cg)) removed.push(cg);
          await removeTree(dir);
          removed.push(dir);
        }
        await rmdir(runDir).catch(() => undefined); // only when empty
      }
      // Processes labelled with a sandbox folder that is gone (or whose owner is dead).
      const scope = runId !== undefined ? join(root, runId) + '/' : root + '/';
      const strays = await killMarked((v) => v.startsWith(scope) && !live.has(v));
      for (const pid of strays) removed.push(`process ${pid}`);
      return { removed: [...new Set(removed)] } satisfies SweepReport;
    },
  };
}

async function isFresh(dir: string): Promise<boolean> {
  const st = await stat(dir).catch(() => undefined);
  return st !== undefined && Date.now() - st.mtimeMs < 60_000;
}

// ---------------------------------------------------------------------------------------------
// one sandbox

async function createLocalSandbox(spec: SandboxSpec, m: Machine, root: string): Promise<Sandbox> {
  checkId('runId', spec.runId);
  checkId('rolloutId', spec.rolloutId);
  warmSpawner();
  const bwrap = m.mode === 'bubblewrap';
  const socketPath = spec.modelEndpoint.socketPath;
  const isolatedNet = bwrap || m.netns.ok;
  if (isolatedNet && !socketPath) {
    throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'the local sandbox isolates the network and reaches the model through a Unix socket: spec.modelEndpoint.socketPath is required', { hint: 'listen on one with ServingProxy.listenUnix and pass its path' });
  }
  if (isolatedNet && !existsSync(NETNS_RUN)) throw new ClawGymError(ErrorCodes.NOT_BUILT, `${NETNS_RUN} is missing`, { hint: 'run npm run build' });
  for (const p of spec.readOnlyPaths ?? []) if (!isAbsolute(p)) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `readOnlyPaths must be absolute: ${p}`);

  const runDir = join(root, spec.runId);
  const dir = join(runDir, spec.rolloutId);
  for (let attempt = 0; ; attempt++) {
    await mkdir(runDir, { recursive: true, mode: 0o755 });
    try { await mkdir(dir, { mode: 0o755 }); break; } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox ${spec.runId}/${spec.rolloutId} already exists (${dir})`, { hint: `destroy it, or sweep('${spec.runId}') (clawgym gc)` });
      if (code !== 'ENOENT' || attempt >= 3) throw e; // ENOENT: a sibling's destroy() removed the empty run folder meanwhile
    }
  }
  const workspace = join(dir, 'workspace');
  const home = join(dir, 'home');
  const limits = { ...spec.limits, pids: spec.limits.pids ?? DEFAULT_PIDS_LIMIT };
  const owner: OwnerFile = {
    pid: process.pid, pidStart: startTimeOf(process.pid), host: hostname(), runId: spec.runId, rolloutId: spec.rolloutId,
    created: new Date().toISOString(), mode: m.mode, cgroups: [],
  };
  let cgroups: string[] = [];
  try {
    await writeFile(join(dir, 'owner.json'), JSON.stringify(owner, null, 2));
    await mkdir(workspace);
    await mkdir(join(home, 'tmp'), { recursive: true });
    const cgName = `clawgym-${`${spec.runId}-${spec.rolloutId}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80)}-${randomBytes(3).toString('hex')}`;
    owner.cgroups = Object.values(m.cgroups).map((c) => join(c.parent, cgName)).filter((v, i, a) => a.indexOf(v) === i);
    await writeFile(join(dir, 'owner.json'), JSON.stringify(owner, null, 2)); // before creating them: sweep finds them
    cgroups = await createCgroups(m.cgroups, cgName, limits);
  } catch (e) {
    for (const cg of owner.cgroups) await removeCgroup(cg);
    await removeTree(dir);
    throw e;
  }
  const realBases = [await realpath(workspace), await realpath(home)];

  const workspacePath = bwrap ? SANDBOX_WORKSPACE : workspace;
  const homePath = bwrap ? SANDBOX_HOME : home;
  const nodeDir = dirname(process.execPath);
  const stdPath = '/usr/local/bin:/usr/bin:/bin';
  const PATH = stdPath.split(':').includes(nodeDir) ? stdPath : `${nodeDir}:${stdPath}`;

  // rlimits for what cgroups do not cover (applied to the command, not to the forwarder).
  const rl: string[] = [];
  if (m.prlimit) {
    if (!m.cgroups.pids && !m.root && (bwrap || spec.limits.pids !== undefined)) rl.push(`--nproc=${limits.pids}`);
    if (!m.cgroups.memory && limits.memoryMb !== undefined) rl.push(`--as=${Math.floor(limits.memoryMb * MiB)}`);
    if (!m.cgroups.cpu && limits.cpus !== undefined && limits.wallMs !== undefined) rl.push(`--cpu=${Math.max(1, Math.ceil((limits.cpus * limits.wallMs) / 1000))}`);
  }
  const rlimitPrefix = rl.length ? [PRLIMIT, ...rl, '--'] : [];

  /** Sandbox path → host path (workspace or HOME only). */
  const toHost = (p: string): string => {
    if (!isAbsolute(p)) {
      const rel = posix.normalize(p);
      if (rel === '..' || rel.startsWith('../')) throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `sandbox path escapes the workspace: ${p}`);
      return join(workspace, rel);
    }
    const abs = posix.normalize(p);
    for (const [inside, host] of [[workspacePath, workspace], [homePath, home]] as const) {
      if (abs === inside) return host;
      if (abs.startsWith(inside + '/')) return join(host, abs.slice(inside.length + 1));
    }
    throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `sandbox path ${p} is outside the sandbox's workspace (${workspacePath}) and HOME (${homePath})`);
  };
  const insideBases = (real: string) => realBases.some((b) => { const rel = relative(b, real); return rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel); });
  /** Refuse host paths that symlinks (made by sandboxed processes) lead out of the sandbox. */
  const checkReal = async (hostPath: string) => {
    let p = hostPath;
    while (!existsSync(p)) p = dirname(p);
    const real = await realpath(p);
    if (!insideBases(real)) throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `sandbox path leads outside the sandbox (through a symlink): ${hostPath} -> ${real}`);
  };
  const prepareTarget = async (hostPath: string) => {
    await checkReal(dirname(hostPath));
    await mkdir(dirname(hostPath), { recursive: true });
    await checkReal(dirname(hostPath));
    const st = await lstat(hostPath).catch(() => undefined);
    if (st?.isSymbolicLink()) await unlink(hostPath);
  };

  const running = new Map<number, { pid: number; done: Promise<ExecResult>; expire: () => void; kill: () => void }>();
  let execCount = 0;
  let destroyed: Promise<void> | undefined;
  const createdAt = Date.now();
  const wallEnds = limits.wallMs !== undefined ? createdAt + limits.wallMs : undefined;
  const killAll = async (expired = false) => {
    for (const r of running.values()) if (expired) r.expire(); else r.kill();
    for (const cg of cgroups) await killCgroup(cg);
    await killMarked((v) => v === dir);
  };
  const wallTimer = wallEnds !== undefined ? setTimeout(() => { void killAll(true); }, limits.wallMs) : undefined;
  wallTimer?.unref();

  const exec = (argv: string[], o: ExecOptions = {}): Promise<ExecResult> => {
    if (destroyed) return Promise.reject(new Error(`sandbox ${spec.runId}/${spec.rolloutId} is destroyed`));
    if (argv.length === 0) return Promise.reject(new Error('exec needs a command'));
    const n = ++execCount;
    const now = Date.now();
    const deadlines = [o.timeoutMs !== undefined ? now + o.timeoutMs : Infinity, wallEnds ?? Infinity];
    const deadline = Math.min(...deadlines);
    if (deadline <= now) {
      return Promise.resolve({ exitCode: null, signal: 'SIGKILL', stdout: '', stderr: 'clawgym: the sandbox\'s wall-clock limit is reached\n', timedOut: true });
    }
    const cwd = o.cwd === undefined ? workspacePath : isAbsolute(o.cwd) ? o.cwd : posix.join(workspacePath, o.cwd);
    const markers = { [SANDBOX_MARKER_ENV]: dir, [EXEC_MARKER_ENV]: String(n) };
    const env: Record<string, string> = {
      PATH, HOME: homePath, TMPDIR: `${homePath}/tmp`, LANG: 'C.UTF-8', ...spec.env, ...o.env, ...markers,
    };
    // Without the forwarder (a process that speaks to modelSocketPath) one Node start is saved.
    const forwarder = o.modelForwarder !== false;
    let cmd: string[];
    let spawnEnv: Record<string, string>;
    let spawnCwd: string | undefined;
    if (bwrap) {
      const args = [...m.systemArgs, '--bind', workspace, SANDBOX_WORKSPACE, '--bind', home, SANDBOX_HOME];
      const ro = new Set([dirname(NETNS_RUN), ...(nodeDir.startsWith('/usr/') ? [] : [nodeDir]), ...(spec.readOnlyPaths ?? [])]);
      for (const p of ro) args.push('--ro-bind-try', p, p);
      args.push('--bind', socketPath!, SANDBOX_PROXY_SOCKET, '--remount-ro', '/');
      args.push('--unshare-all', '--die-with-parent', '--new-session', '--hostname', 'clawgym');
      if (m.root) args.push('--cap-drop', 'ALL');
      // The environment goes to bwrap as its own (spawned with exactly `env`, nothing of the
      // runner's), never as --setenv arguments: a command line is world-readable (ps), and the
      // env holds the session's API key.
      args.push('--chdir', cwd, '--', ...(forwarder ? [process.execPath, NETNS_RUN, SANDBOX_PROXY_SOCKET, String(SANDBOX_PROXY_PORT), cwd, '--'] : []), ...rlimitPrefix, ...argv);
      cmd = [m.bwrap!, ...args];
      spawnEnv = env;
    } else if (m.netns.ok) {
      // Own network, and (as root) own pid namespace and /proc: no other sandbox's or the
      // runner's processes to read the environment of (API keys) or to signal.
      cmd = ['/usr/bin/unshare', '-n', ...(m.root ? ['--pid', '--fork', '--kill-child', '--mount-proc'] : []), '/bin/sh', '-c', `${IP} link set lo up && exec "$0" "$@"`,
        ...(forwarder ? [process.execPath, NETNS_RUN, socketPath!, String(SANDBOX_PROXY_PORT), cwd, '--'] : []), ...rlimitPrefix, ...argv];
      spawnEnv = env;
      spawnCwd = cwd;
    } else {
      cmd = [...rlimitPrefix, ...argv];
      spawnEnv = env;
      spawnCwd = cwd;
    }
    if (cgroups.length) {
      // Join the cgroups before anything runs: everything started from here on inherits them.
      const joinScript = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
      cmd = ['/bin/sh', '-c', joinScript, 'clawgym-cgroup', String(cgroups.length), ...cgroups.map((c) => `${c}/cgroup.procs`), ...cmd];
    }

    const entry = { pid: -1, done: undefined as unknown as Promise<ExecResult>, expire: () => undefined as void, kill: () => undefined as void };
    const done = new Promise<ExecResult>((settle) => {
      let timedOut = false;
      let killed = false;
      const started = startProcess({ cmd, env: spawnEnv, cwd: spawnCwd, stdin: o.stdin ?? '', maxBytes: MAX_OUTPUT_BYTES });
      let pid: number | undefined;
      const kill = () => {
        killed = true;
        started.killed();
        if (pid !== undefined) killGroup(pid);
        void killMarked((v, e) => v === dir && e.includes(`${EXEC_MARKER_ENV}=${n}`));
      };
      void started.pid.then((p) => {
        pid = p;
        if (p === undefined) return;
        entry.pid = p;
        if (killed) killGroup(p); // killed before its pid was known
      });
      const onAbort = () => kill();
      entry.kill = kill;
      entry.expire = () => { timedOut = true; kill(); };
      running.set(n, entry);
      const timer = setTimeout(entry.expire, Math.min(deadline - now, 2 ** 31 - 1));
      if (o.signal?.aborted) kill();
      else o.signal?.addEventListener('abort', onAbort, { once: true });
      void started.done.then((r) => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
        running.delete(n);
        const text = (t: string, bytes: number) => t + (bytes > MAX_OUTPUT_BYTES ? '\n[clawgym: output truncated]\n' : '');
        const extraErr = r.error !== undefined ? `clawgym: cannot start ${cmd[0]}: ${r.error}\n` : '';
        settle({ exitCode: r.code, signal: r.signal, stdout: text(r.stdout, r.outBytes), stderr: text(r.stderr, r.errBytes) + extraErr, timedOut });
      });
    });
    entry.done = done;
    return done;
  };

  return {
    id: `${spec.runId}/${spec.rolloutId}`,
    workspaceHostPath: workspace,
    workspacePath,
    homePath,
    modelBaseUrl: isolatedNet ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}/s/${spec.rolloutId}` : spec.modelEndpoint.url,
    ...(isolatedNet ? { modelSocketPath: bwrap ? SANDBOX_PROXY_SOCKET : socketPath } : {}),
    exec,
    async writeFile(sandboxPath, data) {
      const host = toHost(sandboxPath);
      await prepareTarget(host);
      await writeFile(host, data, { flag: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW });
    },
    async copyIn(hostPath, sandboxPath) {
      const host = toHost(sandboxPath);
      await prepareTarget(host);
      await cp(hostPath, host, { recursive: true });
    },
    async copyOut(sandboxPath, hostPath) {
      const host = toHost(sandboxPath);
      await checkReal(dirname(host));
      await cp(host, hostPath, { recursive: true });
    },
    destroy() {
      destroyed ??= (async () => {
        clearTimeout(wallTimer);
        await killAll();
        let t: NodeJS.Timeout | undefined;
        await Promise.race([Promise.allSettled([...running.values()].map((r) => r.done)), new Promise<void>((r) => { t = setTimeout(r, 3000); })]);
        clearTimeout(t);
        for (const cg of cgroups) await removeCgroup(cg);
        await removeTree(dir);
        await rmdir(runDir).catch(() => undefined); // only when empty
      })();
      return destroyed;
    },
  };
}

function killGroup(pid: number): void {
  if (pid <= 0) return;
  try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
}
