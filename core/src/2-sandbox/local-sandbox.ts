/**
 * One local sandbox: its slot (folder, cgroups and limits, holder: slot.ts), and how its commands
 * run — by its holder, the sandbox's pid 1 (bubblewrap as root: holder.ts), one bubblewrap per
 * command (bubblewrap otherwise, or `holder: false`), or plain processes (the fallback, with
 * `unshare` for network and pids where possible).
 */
import { existsSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { dirname, isAbsolute, posix } from 'node:path';
import { EXEC_OUTPUT_LIMIT_BYTES, execOutput, type ExecOptions, type ExecResult, type Sandbox, type SandboxSpec } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';
import { joinCgroups, killCgroup, removeCgroup, signalCgroup } from './cgroups';
import type { Finished } from './collect';
import { SANDBOX_PROXY_PORT } from './forwarder';
import type { Holder } from './holder';
import { IP, NETNS_RUN, PRLIMIT, type Machine } from './machine';
import { EXEC_MARKER_ENV, killGroup, killMarked, SANDBOX_MARKER_ENV } from './marking';
import { hostFiles, SandboxPaths } from './paths';
import { DEFAULT_PIDS_LIMIT, SANDBOX_HOME, SANDBOX_PROXY_SOCKET, bwrapArgs, makeSlot, sandboxPath, shapeOf, type Background, type SlotPool } from './slot';
import { startProcess, warmSpawner } from './spawner';
import { checkWorkspacePath, refuseWorkspacePath } from './workspace-path';
import { removeTree } from './sweep';

export { DEFAULT_PIDS_LIMIT, SANDBOX_HOME, SANDBOX_PROXY_SOCKET, SANDBOX_WORKSPACE, type Background } from './slot';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]*$/;
const MiB = 1024 * 1024;

/** Check an id used as a folder name. */
export function checkId(kind: string, id: string): void {
  if (!ID_PATTERN.test(id) || id.includes('..')) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox ${kind} ${JSON.stringify(id)} must match ${ID_PATTERN} (it names a folder)`);
}

/** Create one sandbox of `spec` under `root` on machine `m`, from `pool` where it has a slot of its shape. */
export async function createLocalSandbox(spec: SandboxSpec, m: Machine, root: string, background: Background, pool?: SlotPool): Promise<Sandbox> {
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
  if (spec.workspacePath !== undefined) checkWorkspacePath(spec.workspacePath, SANDBOX_HOME);
  if (!bwrap) refuseWorkspacePath(spec, 'local', 'without bubblewrap its commands see the host\'s own folders');

  const limits = { ...spec.limits, pids: spec.limits.pids ?? DEFAULT_PIDS_LIMIT };
  const shape = shapeOf(spec);
  const slot = pool ? await pool.take(shape, spec.rolloutId, limits) : await makeSlot(m, root, shape, spec.rolloutId, limits);
  const { dir, workspace, home, cgroups, holder } = slot;
  const runDir = dirname(dir);

  const workspacePath = bwrap ? shape.workspacePath : workspace;
  const homePath = bwrap ? SANDBOX_HOME : home;
  const paths = new SandboxPaths([{ inside: workspacePath, host: workspace }, { inside: homePath, host: home }], workspacePath);
  const PATH = sandboxPath();

  // rlimits for what cgroups do not cover (applied to the command, not to the forwarder).
  const rl: string[] = [];
  if (m.prlimit) {
    if (!m.cgroups.pids && !m.root && (bwrap || spec.limits.pids !== undefined)) rl.push(`--nproc=${limits.pids}`);
    if (!m.cgroups.memory && limits.memoryMb !== undefined) rl.push(`--as=${Math.floor(limits.memoryMb * MiB)}`);
    if (!m.cgroups.cpu && limits.cpus !== undefined && limits.wallMs !== undefined) rl.push(`--cpu=${Math.max(1, Math.ceil((limits.cpus * limits.wallMs) / 1000))}`);
  }
  const rlimitPrefix = rl.length ? [PRLIMIT, ...rl, '--'] : [];

  const markers = { [SANDBOX_MARKER_ENV]: dir };

  const running = new Map<number, { done: Promise<ExecResult>; expire: () => void; kill: () => void }>();
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

  /** The command line and how to spawn it, per mode without a holder (see the file comment). */
  const commandFor = (argv: string[], cwd: string, o: ExecOptions): { cmd: string[]; cwd?: string } => {
    // Without the forwarder (a process that speaks to modelSocketPath) one Node start is saved.
    const forwarder = o.modelForwarder !== false;
    const forward = (socket: string) => (forwarder ? [process.execPath, NETNS_RUN, socket, String(SANDBOX_PROXY_PORT), cwd, '--'] : []);
    if (bwrap) {
      // The environment goes to bwrap as its own (spawned with exactly `env`, nothing of the
      // runner's), never as --setenv arguments: a command line is world-readable (ps), and the
      // env holds the session's API key.
      return { cmd: joinCgroups(cgroups, [...bwrapArgs(m, slot, shape, cwd), '--', ...forward(SANDBOX_PROXY_SOCKET), ...rlimitPrefix, ...argv]) };
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

    const entry = { done: undefined as unknown as Promise<ExecResult>, expire: () => undefined as void, kill: () => undefined as void };
    let timedOut = false;
    let killed = false;
    let started: { killed(): void } | undefined;
    let pid: number | undefined;
    const kill = () => {
      killed = true;
      started?.killed();
      if (pid !== undefined) killGroup(pid);
      // A holder's commands never leave its pid namespace: its kill reaches them all.
      if (!holder) void killMarked((v, e) => v === dir && e.includes(`${EXEC_MARKER_ENV}=${n}`));
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
      let r: Finished;
      let what: string;
      if (holder) {
        // The holder runs it: a fork and an exec inside the sandbox (see holder.ts).
        try { await holder.ready; } catch (e) { finish(); throw e; }
        if (killed) { finish(); return { exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut }; }
        const held = holder.run({ id: n, argv: [...rlimitPrefix, ...argv], env, cwd, stdin: o.stdin ?? '', maxBytes: EXEC_OUTPUT_LIMIT_BYTES });
        started = { killed: () => held.kill() };
        what = argv[0]!;
        r = await held.done;
      } else {
        const c = commandFor(argv, cwd, o);
        if (killed) { finish(); return { exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut }; }
        const s = startProcess({ cmd: c.cmd, env, cwd: c.cwd, stdin: o.stdin ?? '', maxBytes: EXEC_OUTPUT_LIMIT_BYTES });
        started = s;
        what = c.cmd[0]!;
        void s.pid.then((p) => {
          pid = p;
          if (p !== undefined && killed) killGroup(p); // killed before its pid was known
        });
        r = await s.done;
      }
      finish();
      const extraErr = r.error !== undefined ? `clawgym: cannot start ${what}: ${r.error}\n` : '';
      return { exitCode: r.code, signal: r.signal, stdout: execOutput(r.stdout, r.outBytes), stderr: execOutput(r.stderr, r.errBytes) + extraErr, timedOut };
    })();
    entry.done = done;
    return done;
  };

  /** With a holder: stop everything at once, remove the rest off the rollout's path. */
  const destroyHeld = async (h: Holder) => {
    clearTimeout(wallTimer);
    for (const r of running.values()) r.kill();
    await Promise.all(cgroups.map((cg) => signalCgroup(cg)));
    await h.kill(); // the pid namespace is empty once its pid 1 is gone: nothing marked is left
    background((async () => {
      await settleWithin([...running.values()].map((r) => r.done), 3000);
      for (const cg of cgroups) await removeCgroup(cg);
      await removeTree(dir);
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
