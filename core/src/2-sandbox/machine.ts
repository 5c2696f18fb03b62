/**
 * What this machine offers the local sandbox, found once per provider: bubblewrap (and whether
 * it can make a sandbox here), network namespaces, cgroups, prlimit, root, and what a
 * long-lived holder per sandbox needs (root, perl, a known prctl syscall number). Also how each limit is then
 * enforced, in words, and the one-line isolation summary.
 */
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { detectCgroups, type Cgroups, type Controller } from './cgroups';
import { collectOutput } from './collect';
import { ClawGymError, ErrorCodes } from '../errors';
import { parseDiskLimit, probeDiskMount, sizeInWords } from './disk';

/** Folder of the built sandbox scripts that run inside sandboxes (netns-run.js, forwarder-fd.js). */
export const SANDBOX_SCRIPTS = resolve(__dirname, '..', '..', 'dist', '2-sandbox');
/** `node netns-run.js <socket> <port> <cwd> -- argv`: a forwarder for one command's life. */
export const NETNS_RUN = join(SANDBOX_SCRIPTS, 'netns-run.js');
export const PRLIMIT = '/usr/bin/prlimit';
export const IP = '/usr/sbin/ip';
export const PERL = '/usr/bin/perl';
/** prctl(2)'s syscall number (the holder calls PR_SET_DUMPABLE through it), where known. */
export const PRCTL_SYSCALL: number | undefined = ({ x64: 157, arm64: 167 } as Record<string, number>)[process.arch];

/** Options of the machine detection (the local provider's). */
export interface DetectOptions {
  forceFallback?: boolean;
  cgroups?: boolean;
  /** One holder per sandbox where the machine allows it (default true; false: a bubblewrap per command). */
  holder?: boolean;
  /** A root filesystem folder whose system (/usr, /bin, /lib…, /etc) sandboxes see instead of the host's (bubblewrap only). */
  rootfs?: string;
  /** What a sandbox may write, in all (`'1g'` when unset; a number is MiB; false or 0: no limit). See disk.ts. */
  diskLimit?: string | number | false;
}

/** How each limit is enforced here, in words (`not enforced: <why>` when it is not). */
export interface LimitEnforcement {
  pids: string;
  memory: string;
  cpus: string;
  wall: string;
  /** What a sandbox can write (workspace, HOME, /tmp); absent where a provider does not say. */
  disk?: string;
}

/** The disk limit on this machine: its size, and whether it is mounted (root) or why not. */
export interface DiskLimit {
  bytes?: number;
  /** A size-limited tmpfs holds each sandbox's workspace, HOME and /tmp (see disk.ts). */
  mount: boolean;
  reason?: string;
}

export interface Machine {
  mode: 'bubblewrap' | 'fallback';
  bwrap?: string;
  bwrapVersion?: string;
  /** Why bubblewrap is not used (fallback only). */
  whyFallback?: string;
  netns: { ok: boolean; reason?: string };
  cgroups: Cgroups;
  prlimit: boolean;
  root: boolean;
  /** One long-lived holder per sandbox owns its namespaces and runs its commands (bubblewrap as root only). */
  holder: boolean;
  systemArgs: string[];
  disk: DiskLimit;
}

/** `bwrap` on PATH (or in /usr/bin), if installed. */
export function bubblewrapPath(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/bin', '/usr/local/bin'];
  for (const d of dirs) if (existsSync(join(d, 'bwrap'))) return join(d, 'bwrap');
  return undefined;
}

/** Whether this machine can run commands in a fresh network namespace (`unshare -n` and `ip`, as root). */
export function netnsAvailable(): { ok: boolean; reason?: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'network namespaces need root here (unshare -n)' };
  for (const bin of ['/usr/bin/unshare', IP]) if (!existsSync(bin)) return { ok: false, reason: `${bin} is missing (apt-get install util-linux iproute2)` };
  if (!existsSync(NETNS_RUN)) return { ok: false, reason: `${NETNS_RUN} is missing: run npm run build` };
  return { ok: true };
}

/**
 * bubblewrap's arguments for the read-only system every sandbox sees: the host's, or with
 * `rootfs` that folder's (an image's root filesystem, e.g. scripts/openclaw-image.sh's), so a
 * rollout runs on the same system as in the image's Docker container.
 */
export function systemBinds(rootfs = '/'): string[] {
  const from = (p: string) => join(rootfs, p);
  const a = ['--ro-bind', from('/usr'), '/usr'];
  for (const p of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    try {
      const st = lstatSync(from(p));
      if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(from(p)), p);
      else if (st.isDirectory()) a.push('--ro-bind', from(p), p);
    } catch { /* not on this system */ }
  }
  a.push('--ro-bind', from('/etc'), '/etc');
  // Root inside maps to root outside: hide the password hashes and private keys.
  for (const p of ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-']) if (existsSync(from(p))) a.push('--ro-bind', '/dev/null', p);
  if (existsSync(from('/etc/ssl/private'))) a.push('--tmpfs', '/etc/ssl/private');
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  return a;
}

/** Refuse a root filesystem folder that holds no system to run (checked before any sandbox starts). */
export function checkRootfs(rootfs: string): void {
  if (!existsSync(join(rootfs, 'usr', 'bin')) || !existsSync(join(rootfs, 'etc'))) {
    throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox option rootfs ${rootfs} is not a root filesystem (no usr/bin and etc in it)`, { hint: 'Build the OpenClaw image\'s root filesystem with `bash scripts/openclaw-image.sh` (it prints the folder), or drop the rootfs option to run on the host\'s system.' });
  }
}

async function probe(cmd: string[]): Promise<{ code: number | null; out: string }> {
  const r = await collectOutput(cmd, { env: {}, timeoutMs: 5000 });
  return { code: r.error ? 127 : r.code, out: (r.error ?? `${r.stdout}${r.stderr}`).trim() };
}

/** What this machine offers (see the file comment). */
export async function detectMachine(options: DetectOptions): Promise<Machine> {
  const root = process.getuid?.() === 0;
  if (options.rootfs !== undefined) checkRootfs(options.rootfs);
  const bytes = parseDiskLimit(options.diskLimit);
  const mount = bytes === undefined ? { ok: false } : await probeDiskMount();
  const common = {
    disk: { ...(bytes !== undefined ? { bytes } : {}), mount: mount.ok, ...(mount.reason ? { reason: mount.reason } : {}) },
    netns: netnsAvailable(),
    cgroups: options.cgroups === false ? {} : detectCgroups(),
    prlimit: existsSync(PRLIMIT),
    root,
    systemArgs: systemBinds(options.rootfs),
    holder: false,
  };
  const bwrap = bubblewrapPath();
  if (options.forceFallback) return { ...common, mode: 'fallback', whyFallback: 'forceFallback is set' };
  if (!bwrap) return { ...common, mode: 'fallback', whyFallback: 'bubblewrap (bwrap) is not installed' };
  // --as-pid-1: bubblewrap then waits for `true` itself; with its own init inside, it exited before
  // that init did, which was left a zombie for init to reap.
  const made = await probe([bwrap, ...common.systemArgs, '--unshare-all', '--die-with-parent', '--new-session', '--as-pid-1', '--', '/usr/bin/true']);
  if (made.code !== 0) return { ...common, mode: 'fallback', whyFallback: `bubblewrap is installed but cannot create a sandbox here (${made.out || `exit ${made.code}`})` };
  const version = await probe([bwrap, '--version']);
  // The holder (holder.ts) is perl; as root, bubblewrap maps root to root and cgroups are ours.
  const holder = options.holder !== false && root && existsSync(PERL) && PRCTL_SYSCALL !== undefined;
  return { ...common, mode: 'bubblewrap', bwrap, bwrapVersion: version.code === 0 ? version.out : 'bubblewrap', holder };
}

/**
 * How each limit would be enforced with these options, known without starting anything (test
 * files decide at load time which limit checks can run, and skip the others visibly).
 */
export function enforcementHere(options: DetectOptions = {}): LimitEnforcement {
  const mode = !options.forceFallback && bubblewrapPath() ? 'bubblewrap' : 'fallback';
  const root = process.getuid?.() === 0;
  const bytes = parseDiskLimit(options.diskLimit);
  // Whether the mount is permitted is only known by trying it (detectMachine does): root is assumed able to.
  const disk: DiskLimit = { ...(bytes !== undefined ? { bytes } : {}), mount: root && bytes !== undefined, ...(root ? {} : { reason: 'mounting a size-limited tmpfs needs root' }) };
  return enforcementOf({ mode, root, prlimit: existsSync(PRLIMIT), cgroups: options.cgroups === false ? {} : detectCgroups(), disk });
}

/** How each limit is enforced on machine `m`. */
export function enforcementOf(m: Pick<Machine, 'cgroups' | 'prlimit' | 'root' | 'mode' | 'disk'>): LimitEnforcement {
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
    disk: m.disk.bytes === undefined ? 'not enforced: diskLimit is off'
      : m.disk.mount ? `tmpfs of ${sizeInWords(m.disk.bytes)} for workspace, HOME${m.mode === 'bubblewrap' ? ' and /tmp' : ''} (ENOSPC past it)`
        : `not enforced: ${m.disk.reason}`,
  };
}

/** The one-line isolation summary (`describeIsolation`). */
export function describeMachine(m: Machine): string {
  const e = enforcementOf(m);
  const limits = `limits: pids ${e.pids}; memory ${e.memory}; cpus ${e.cpus}; wall ${e.wall}; disk ${e.disk}`;
  if (m.mode === 'bubblewrap') {
    const how = m.holder ? ', one holder process per sandbox (its pid 1: runs the commands, forwards the model port)' : ', one bubblewrap per command';
    return `${m.bwrapVersion}: all namespaces unshared (network: own loopback + model socket only), read-only /usr and /etc, writable workspace and HOME only, env cleared${how}; ${limits}`;
  }
  const net = m.netns.ok ? 'network isolated (unshare -n: own loopback + model socket only)' : `NO network isolation (${m.netns.reason})`;
  return `fallback (${m.whyFallback}): plain processes, NO filesystem isolation, own temp workspace and HOME, env scrubbed, ${net}; ${limits}`;
}

/** The warning printed once when sandboxes run as plain processes. */
export function fallbackWarning(m: Machine): string {
  const lines = [
    `clawgym: local sandbox WITHOUT FILESYSTEM ISOLATION (${m.whyFallback}).`,
    'Sandboxed processes run as this user on the host filesystem: they can read and write anything it can, outside their workspace too.',
    m.netns.ok ? 'Network is still isolated (unshare -n: only the model endpoint is reachable).' : `Network is NOT isolated either: ${m.netns.reason}.`,
    'Install bubblewrap for real isolation: apt-get install bubblewrap (dnf install bubblewrap; pacman -S bubblewrap).',
  ];
  return lines.join('\n  ');
}

