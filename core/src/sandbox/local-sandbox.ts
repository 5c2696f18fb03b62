/**
 * One local sandbox: its folder, cgroups and limits, and how its commands run — entering its
 * holder's namespaces (bubblewrap as root), one bubblewrap per command (bubblewrap otherwise),
 * or plain processes (the fallback, with `unshare` for network and pids where possible).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, isAbsolute, join, posix } from 'node:path';
import type { ExecOptions, ExecResult, Sandbox, SandboxSpec } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';
import { createCgroups, joinCgroups, removeCgroup, signalCgroup, killCgroup } from './cgroups';
import { SANDBOX_PROXY_PORT } from './forwarder';
import { Holder } from './holder';
import { IP, NETNS_RUN, PRLIMIT, type Machine } from './machine';
import { EXEC_MARKER_ENV, killGroup, killMarked, SANDBOX_MARKER_ENV } from './marking';
import { startTimeOf } from './owner';
import { hostFiles, SandboxPaths } from './paths';
import { startProcess, warmSpawner } from './spawner';
import { removeSandbox, removeTree, type OwnerFile } from './sweep';

/** The workspace as processes in a bubblewrap sandbox see it. */
export const SANDBOX_WORKSPACE = '/workspace';
/** HOME as processes in a bubblewrap sandbox see it (TMPDIR is `<HOME>/tmp`). */
export const SANDBOX_HOME = '/home/agent';
/** Where the proxy's Unix socket is bound inside a bubblewrap sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/clawgym/proxy.sock';
/** Process (task) limit when the spec sets none. Threads count too: one Node.js process is ~10. */
export const DEFAULT_PIDS_LIMIT = 1024;

const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]*$/;
const MiB = 1024 * 1024;

/** Check an id used as a folder name. */
export function checkId(kind: string, id: string): void {
  if (!ID_PATTERN.test(id) || id.includes('..')) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox ${kind} ${JSON.stringify(id)} must match ${ID_PATTERN} (it names a folder)`);
}

/** Where a destroyed sandbox's removal (cgroups, folder) finishes off the rollout's path. */
export type Background = (removal: Promise<unknown>) => void;

/** Create one sandbox of `spec` under `root` on machine `m`. */
export async function createLocalSandbox(spec: SandboxSpec, m: Machine, root: string, background: Background): Promise<Sandbox> {
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
  const cgName = `clawgym-${`${spec.runId}-${spec.rolloutId}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80)}-${randomBytes(3).toString('hex')}`;
  const owner: OwnerFile = {
    pid: process.pid, pidStart: startTimeOf(process.pid), host: hostname(), runId: spec.runId, rolloutId: spec.rolloutId,
    created: new Date().toISOString(), mode: m.mode,
    cgroups: Object.values(m.cgroups).map((c) => join(c.parent, cgName)).filter((v, i, a) => a.indexOf(v) === i),
  };
  let cgroups: string[] = [];
  try {
    await writeFile(join(dir, 'owner.json'), JSON.stringify(owner, null, 2)); // before the cgroups exist: sweep finds them
    await mkdir(workspace);
    await mkdir(join(home, 'tmp'), { recursive: true });
    cgroups = await createCgroups(m.cgroups, cgName, limits);
  } catch (e) {
    for (const cg of owner.cgroups) await removeCgroup(cg);
    await removeTree(dir);
    throw e;
  }

  const workspacePath = bwrap ? SANDBOX_WORKSPACE : workspace;
  const homePath = bwrap ? SANDBOX_HOME : home;
  const paths = new SandboxPaths([{ inside: workspacePath, host: workspace }, { inside: homePath, host: home }], workspacePath);
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

  /** bubblewrap up to `--`: the read-only system, the sandbox's folders, the model socket, every namespace unshared. */
  const bwrapArgs = (cwd: string): string[] => {
    const args = [m.bwrap!, ...m.systemArgs, '--bind', workspace, SANDBOX_WORKSPACE, '--bind', home, SANDBOX_HOME];
    const ro = new Set([dirname(NETNS_RUN), ...(nodeDir.startsWith('/usr/') ? [] : [nodeDir]), ...(spec.readOnlyPaths ?? [])]);
    for (const p of ro) args.push('--ro-bind-try', p, p);
    args.push('--bind', socketPath!, SANDBOX_PROXY_SOCKET, '--remount-ro', '/');
    args.push('--unshare-all', '--die-with-parent', '--new-session', '--hostname', 'clawgym');
    if (m.root) args.push('--cap-drop', 'ALL');
    args.push('--chdir', cwd);
    return args;
  };
  const markers = { [SANDBOX_MARKER_ENV]: dir };
  // The holder's environment has the marker and PATH only: never a secret.
  const holder = bwrap && m.holder
    ? new Holder({ bwrap: bwrapArgs(SANDBOX_WORKSPACE), env: { PATH, LANG: 'C.UTF-8', ...markers }, cgroups, port: SANDBOX_PROXY_PORT, socketInside: SANDBOX_PROXY_SOCKET, node: process.execPath, start: startProcess })
    : undefined;

  const running = new Map<number, { pid: number; done: Promise<ExecResult>; expire: () => void; kill: () => void }>();
  let execCount = 0;
  let destroyed: Promise<void> | undefined;
  const createdAt = Date.now();
  const wallEnds = limits.wallMs !== undefined ? createdAt + limits.wallMs : undefined;
  const killAll = async (expired = false) => {
    for (const r of running.values()) if (expired) r.expire(); else r.kill();
    await holder?.kill();
    for (const cg of cgroups) await killCgroup(cg);
    await killMarked((v) => v === dir);
  };
  const wallTimer = wallEnds !== undefined ? setTimeout(() => { void killAll(true); }, limits.wallMs) : undefined;
  wallTimer?.unref();

  /** The command line and how to spawn it, per mode (see the file comment). */
  const commandFor = async (argv: string[], cwd: string, o: ExecOptions): Promise<{ cmd: string[]; cwd?: string }> => {
    // Without the forwarder (a process that speaks to modelSocketPath) one Node start is saved.
    const forwarder = o.modelForwarder !== false;
    if (holder) {
      if (forwarder) void holder.forward();
      return { cmd: joinCgroups(cgroups, await holder.enter([...rlimitPrefix, ...argv], cwd, SANDBOX_WORKSPACE)) };
    }
    const forward = (socket: string) => (forwarder ? [process.execPath, NETNS_RUN, socket, String(SANDBOX_PROXY_PORT), cwd, '--'] : []);
    if (bwrap) {
      // The environment goes to bwrap as its own (spawned with exactly `env`, nothing of the
      // runner's), never as --setenv arguments: a command line is world-readable (ps), and the
      // env holds the session's API key.
      return { cmd: joinCgroups(cgroups, [...bwrapArgs(cwd), '--', ...forward(SANDBOX_PROXY_SOCKET), ...rlimitPrefix, ...argv]) };
    }
    if (m.netns.ok) {
      // Own network, and (as root) own pid namespace and /proc: no other sandbox's or the
      // runner's processes to read the environment of (API keys) or to signal.
      const unshare = ['/usr/bin/unshare', '-n', ...(m.root ? ['--pid', '--fork', '--kill-child', '--mount-proc'] : []), '/bin/sh', '-c', `${IP} link set lo up && exec "$0" "$@"`];
      return { cmd: joinCgroups(cgroups, [...unshare, ...forward(socketPath!), ...rlimitPrefix, ...argv]), cwd };
    }
    return { cmd: joinCgroups(cgroups, [...rlimitPrefix, ...argv]), cwd };
  };

  const exec = (argv: string[], o: ExecOptions = {}): Promise<ExecResult> => {
    if (destroyed) return Promise.reject(new ClawGymError(ErrorCodes.SANDBOX_GONE, `sandbox ${spec.runId}/${spec.rolloutId} is destroyed`));
    if (argv.length === 0) return Promise.reject(new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'exec needs a command'));
    const n = ++execCount;
    const now = Date.now();
    const deadline = Math.min(o.timeoutMs !== undefined ? now + o.timeoutMs : Infinity, wallEnds ?? Infinity);
    if (deadline <= now) {
      return Promise.resolve({ exitCode: null, signal: 'SIGKILL', stdout: '', stderr: 'clawgym: the sandbox\'s wall-clock limit is reached\n', timedOut: true });
    }
    const gone = holder?.gone();
    if (gone) return Promise.reject(new ClawGymError(ErrorCodes.SANDBOX_GONE, `sandbox ${spec.runId}/${spec.rolloutId}: ${gone}`));
    const cwd = o.cwd === undefined ? workspacePath : isAbsolute(o.cwd) ? o.cwd : posix.join(workspacePath, o.cwd);
    const env: Record<string, string> = {
      PATH, HOME: homePath, TMPDIR: `${homePath}/tmp`, LANG: 'C.UTF-8', ...spec.env, ...o.env, ...markers, [EXEC_MARKER_ENV]: String(n),
    };

    const entry = { pid: -1, done: undefined as unknown as Promise<ExecResult>, expire: () => undefined as void, kill: () => undefined as void };
    let timedOut = false;
    let killed = false;
    let started: ReturnType<typeof startProcess> | undefined;
    let pid: number | undefined;
    const kill = () => {
      killed = true;
      started?.killed();
      if (pid !== undefined) killGroup(pid);
      void killMarked((v, e) => v === dir && e.includes(`${EXEC_MARKER_ENV}=${n}`));
    };
    entry.kill = kill;
    entry.expire = () => { timedOut = true; kill(); };
    running.set(n, entry);
    const timer = setTimeout(entry.expire, Math.min(deadline - now, 2 ** 31 - 1));
    const onAbort = () => kill();
    if (o.signal?.aborted) kill();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = () => { clearTimeout(timer); o.signal?.removeEventListener('abort', onAbort); running.delete(n); };

    const done = (async (): Promise<ExecResult> => {
      let c: { cmd: string[]; cwd?: string };
      try { c = await commandFor(argv, cwd, o); } catch (e) { finish(); throw e; }
      if (killed) { finish(); return { exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut }; }
      started = startProcess({ cmd: c.cmd, env, cwd: c.cwd, stdin: o.stdin ?? '', maxBytes: MAX_OUTPUT_BYTES });
      void started.pid.then((p) => {
        pid = p;
        if (p === undefined) return;
        entry.pid = p;
        if (killed) killGroup(p); // killed before its pid was known
      });
      const r = await started.done;
      finish();
      const text = (t: string, bytes: number) => t + (bytes > MAX_OUTPUT_BYTES ? '\n[clawgym: output truncated]\n' : '');
      const extraErr = r.error !== undefined ? `clawgym: cannot start ${c.cmd[0]}: ${r.error}\n` : '';
      return { exitCode: r.code, signal: r.signal, stdout: text(r.stdout, r.outBytes), stderr: text(r.stderr, r.errBytes) + extraErr, timedOut };
    })();
    entry.done = done;
    return done;
  };

  /** With a holder: stop everything at once, remove the rest off the rollout's path. */
  const destroyHeld = async (h: Holder) => {
    clearTimeout(wallTimer);
    for (const r of running.values()) r.kill();
    await Promise.all(cgroups.map((cg) => signalCgroup(cg)));
    await h.kill(); // the pid namespace is empty once its pid 1 is gone
    background((async () => {
      await settleWithin([...running.values()].map((r) => r.done), 3000);
      await removeSandbox(dir, cgroups);
      await rmdir(runDir).catch(() => undefined); // only when empty
    })());
  };
  const destroyPlain = async () => {
    clearTimeout(wallTimer);
    await killAll();
    await settleWithin([...running.values()].map((r) => r.done), 3000);
    for (const cg of cgroups) await removeCgroup(cg);
    await removeTree(dir);
    await rmdir(runDir).catch(() => undefined); // only when empty
  };

  return {
    id: `${spec.runId}/${spec.rolloutId}`,
    workspaceHostPath: workspace,
    workspacePath,
    homePath,
    modelBaseUrl: isolatedNet ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}/s/${spec.rolloutId}` : spec.modelEndpoint.url,
    ...(isolatedNet ? { modelSocketPath: bwrap ? SANDBOX_PROXY_SOCKET : socketPath } : {}),
    exec,
    ...hostFiles(paths),
    destroy() {
      destroyed ??= holder ? destroyHeld(holder) : destroyPlain();
      return destroyed;
    },
  };
}

/** Wait for `ps` to settle, at most `ms`. */
async function settleWithin(ps: Promise<unknown>[], ms: number): Promise<void> {
  let t: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(ps), new Promise<void>((r) => { t = setTimeout(r, ms); })]);
  clearTimeout(t);
}
