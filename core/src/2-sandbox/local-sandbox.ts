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
import { cgroupCpuSeconds, joinCgroups, killCgroup, removeCgroup, signalCgroup } from './cgroups';
import type { Finished } from './collect';
import { SANDBOX_PROXY_PORT } from './forwarder';
import type { Holder } from './holder';
import { IP, NETNS_RUN, PRLIMIT, type Machine } from './machine';
import { EXEC_MARKER_ENV, killGroup, killMarked, SANDBOX_MARKER_ENV } from './marking';
import { hostFiles, SandboxPaths } from './paths';
import { DEFAULT_PIDS_LIMIT, SANDBOX_HOME, SANDBOX_PROXY_SOCKET, bwrapArgs, makeSlot, sandboxPath, shapeOf, type Background, type Slot, type SlotPool, type SlotShape } from './slot';
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

/** What a sandbox's commands are run with: fixed at its creation. */
interface Box {
  spec: SandboxSpec;
  m: Machine;
  slot: Slot;
  shape: SlotShape;
  bwrap: boolean;
  /** The model socket on this machine (the spec's). */
  socketPath?: string;
  /** prlimit and its rlimits for what cgroups do not cover, before each command (not the forwarder). */
  rlimitPrefix: string[];
  workspacePath: string;
  homePath: string;
  /** Commands running now, by number. */
  running: Map<number, Running>;
  /** When the sandbox's wall-clock limit ends (epoch ms). */
  wallEnds?: number;
}

interface Running { done: Promise<ExecResult>; expire: () => void; kill: () => void }

/** Refuse a spec this machine cannot run as asked; how its commands will be isolated. */
function checkSpec(spec: SandboxSpec, m: Machine): { bwrap: boolean; isolatedNet: boolean; socketPath?: string } {
  checkId('runId', spec.runId);
  checkId('rolloutId', spec.rolloutId);
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
  return { bwrap, isolatedNet, socketPath };
}

/** rlimits for what cgroups do not cover, as a prlimit prefix (empty when none is needed). */
function rlimitPrefixFor(m: Machine, spec: SandboxSpec, limits: SandboxSpec['limits'] & { pids: number }, bwrap: boolean): string[] {
  const rl: string[] = [];
  if (m.prlimit) {
    if (!m.cgroups.pids && !m.root && (bwrap || spec.limits.pids !== undefined)) rl.push(`--nproc=${limits.pids}`);
    if (!m.cgroups.memory && limits.memoryMb !== undefined) rl.push(`--as=${Math.floor(limits.memoryMb * MiB)}`);
    if (!m.cgroups.cpu && limits.cpus !== undefined && limits.wallMs !== undefined) rl.push(`--cpu=${Math.max(1, Math.ceil((limits.cpus * limits.wallMs) / 1000))}`);
  }
  return rl.length ? [PRLIMIT, ...rl, '--'] : [];
}

/** The command line and how to spawn it, per mode without a holder (see the file comment). */
function commandFor(b: Box, argv: string[], cwd: string, o: ExecOptions): { cmd: string[]; cwd?: string } {
  const { m, slot, shape, rlimitPrefix } = b;
  // Without the forwarder (a process that speaks to modelSocketPath) one Node start is saved.
  const forwarder = o.modelForwarder !== false;
  const forward = (socket: string) => (forwarder ? [process.execPath, NETNS_RUN, socket, String(SANDBOX_PROXY_PORT), cwd, '--'] : []);
  if (b.bwrap) {
    // The environment goes to bwrap as its own (spawned with exactly `env`, nothing of the
    // runner's), never as --setenv arguments: a command line is world-readable (ps), and the
    // env holds the session's API key.
    return { cmd: joinCgroups(slot.cgroups, [...bwrapArgs(m, slot, shape, cwd), '--', ...forward(SANDBOX_PROXY_SOCKET), ...rlimitPrefix, ...argv]) };
  }
  if (m.netns.ok) {
    // Own network, and (as root) own pid namespace and /proc: no other sandbox's or the
    // runner's processes to read the environment of (API keys) or to signal.
    const unshare = ['/usr/bin/unshare', '-n', ...(m.root ? ['--pid', '--fork', '--kill-child', '--mount-proc'] : []), '/bin/sh', '-c', `${IP} link set lo up && exec "$0" "$@"`];
    return { cmd: joinCgroups(slot.cgroups, [...unshare, ...forward(b.socketPath!), ...rlimitPrefix, ...argv]), cwd };
  }
  return { cmd: joinCgroups(slot.cgroups, [...rlimitPrefix, ...argv]), cwd };
}

/** How one command is stopped: by the holder's kill, or its process group and marked processes. */
interface Control { killed: boolean; timedOut: boolean; started?: { killed(): void }; pid?: number }

/** Run command `n` to its end: in the holder, or spawned as {@link commandFor} says. */
async function runCommand(b: Box, n: number, argv: string[], env: Record<string, string>, cwd: string, o: ExecOptions, c: Control, finish: () => void): Promise<ExecResult> {
  const holder = b.slot.holder;
  const gone = (): ExecResult => ({ exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut: c.timedOut });
  let r: Finished;
  let what: string;
  if (holder) {
    // The holder runs it: a fork and an exec inside the sandbox (see holder.ts).
    try { await holder.ready; } catch (e) { finish(); throw e; }
    if (c.killed) { finish(); return gone(); }
    const held = holder.run({ id: n, argv: [...b.rlimitPrefix, ...argv], env, cwd, stdin: o.stdin ?? '', maxBytes: EXEC_OUTPUT_LIMIT_BYTES });
    c.started = { killed: () => held.kill() };
    what = argv[0]!;
    r = await held.done;
  } else {
    const cmd = commandFor(b, argv, cwd, o);
    if (c.killed) { finish(); return gone(); }
    const s = startProcess({ cmd: cmd.cmd, env, cwd: cmd.cwd, stdin: o.stdin ?? '', maxBytes: EXEC_OUTPUT_LIMIT_BYTES });
    c.started = s;
    what = cmd.cmd[0]!;
    void s.pid.then((p) => {
      c.pid = p;
      if (p !== undefined && c.killed) killGroup(p); // killed before its pid was known
    });
    r = await s.done;
  }
  finish();
  const extraErr = r.error !== undefined ? `clawgym: cannot start ${what}: ${r.error}\n` : '';
  return { exitCode: r.code, signal: r.signal, stdout: execOutput(r.stdout, r.outBytes), stderr: execOutput(r.stderr, r.errBytes) + extraErr, timedOut: c.timedOut };
}

/** The sandbox's `exec`: limits, environment, timeout, abort and kill around {@link runCommand}. */
function execFor(b: Box, isDestroyed: () => boolean): (argv: string[], o?: ExecOptions) => Promise<ExecResult> {
  const { spec, slot } = b;
  const markers = { [SANDBOX_MARKER_ENV]: slot.dir };
  let execCount = 0;
  return (argv, o = {}) => {
    if (isDestroyed()) return Promise.reject(new ClawGymError(ErrorCodes.SANDBOX_GONE, `sandbox ${spec.runId}/${spec.rolloutId} is destroyed`));
    if (argv.length === 0) return Promise.reject(new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'exec needs a command'));
    const n = ++execCount;
    const now = Date.now();
    const deadline = Math.min(o.timeoutMs !== undefined ? now + o.timeoutMs : Infinity, b.wallEnds ?? Infinity);
    if (deadline <= now) {
      return Promise.resolve({ exitCode: null, signal: 'SIGKILL', stdout: '', stderr: 'clawgym: the sandbox\'s wall-clock limit is reached\n', timedOut: true });
    }
    const gone = slot.holder?.gone();
    if (gone) return Promise.reject(new ClawGymError(ErrorCodes.SANDBOX_GONE, `sandbox ${spec.runId}/${spec.rolloutId}: ${gone}`));
    const cwd = o.cwd === undefined ? b.workspacePath : isAbsolute(o.cwd) ? o.cwd : posix.join(b.workspacePath, o.cwd);
    const env: Record<string, string> = {
      PATH: sandboxPath(), HOME: b.homePath, TMPDIR: `${b.homePath}/tmp`, LANG: 'C.UTF-8', ...spec.env, ...o.env, ...markers, [EXEC_MARKER_ENV]: String(n),
    };
    const c: Control = { killed: false, timedOut: false };
    const kill = () => {
      c.killed = true;
      c.started?.killed();
      if (c.pid !== undefined) killGroup(c.pid);
      // A holder's commands never leave its pid namespace: its kill reaches them all.
      if (!slot.holder) void killMarked((v, e) => v === slot.dir && e.includes(`${EXEC_MARKER_ENV}=${n}`));
    };
    const entry: Running = { done: undefined as unknown as Promise<ExecResult>, kill, expire: () => { c.timedOut = true; kill(); } };
    b.running.set(n, entry);
    const timer = setTimeout(entry.expire, Math.min(deadline - now, 2 ** 31 - 1));
    const onAbort = () => kill();
    if (o.signal?.aborted) kill();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = () => { clearTimeout(timer); o.signal?.removeEventListener('abort', onAbort); b.running.delete(n); };
    entry.done = runCommand(b, n, argv, env, cwd, o, c, finish);
    return entry.done;
  };
}

/** Kill everything the sandbox started (`expired`: as its wall-clock limit does). */
async function killAll(b: Box, expired = false): Promise<void> {
  for (const r of b.running.values()) if (expired) r.expire(); else r.kill();
  await b.slot.holder?.kill();
  for (const cg of b.slot.cgroups) await killCgroup(cg);
  await killMarked((v) => v === b.slot.dir);
}

/** With a holder: stop everything at once, remove the rest off the rollout's path. */
async function destroyHeld(b: Box, h: Holder, background: Background): Promise<void> {
  for (const r of b.running.values()) r.kill();
  // Pid 1 first: the pid namespace is empty once it is gone (nothing marked is left), and
  // bubblewrap reaps it. Signalling the cgroups first killed bubblewrap with it, and the holder
  // died after its parent: a zombie for init to reap.
  await h.kill();
  await Promise.all(b.slot.cgroups.map((cg) => signalCgroup(cg)));
  background((async () => {
    await settleWithin([...b.running.values()].map((r) => r.done), 3000);
    await removeSlotFolders(b);
  })());
}

async function destroyPlain(b: Box): Promise<void> {
  await killAll(b);
  await settleWithin([...b.running.values()].map((r) => r.done), 3000);
  await removeSlotFolders(b);
}

async function removeSlotFolders(b: Box): Promise<void> {
  for (const cg of b.slot.cgroups) await removeCgroup(cg);
  await removeTree(b.slot.dir);
  await rmdir(dirname(b.slot.dir)).catch(() => undefined); // the run's folder, only when empty
}

/** Create one sandbox of `spec` under `root` on machine `m`, from `pool` where it has a slot of its shape. */
export async function createLocalSandbox(spec: SandboxSpec, m: Machine, root: string, background: Background, pool?: SlotPool): Promise<Sandbox> {
  const { bwrap, isolatedNet, socketPath } = checkSpec(spec, m);
  warmSpawner();
  const limits = { ...spec.limits, pids: spec.limits.pids ?? DEFAULT_PIDS_LIMIT };
  const shape = shapeOf(spec);
  const slot = pool ? await pool.take(shape, spec.rolloutId, limits) : await makeSlot(m, root, shape, spec.rolloutId, limits);
  const workspacePath = bwrap ? shape.workspacePath : slot.workspace;
  const homePath = bwrap ? SANDBOX_HOME : slot.home;
  const b: Box = {
    spec, m, slot, shape, bwrap, socketPath, rlimitPrefix: rlimitPrefixFor(m, spec, limits, bwrap), workspacePath, homePath,
    running: new Map(), wallEnds: limits.wallMs !== undefined ? Date.now() + limits.wallMs : undefined,
  };
  const paths = new SandboxPaths([{ inside: workspacePath, host: slot.workspace }, { inside: homePath, host: slot.home }], workspacePath);
  const wallTimer = limits.wallMs !== undefined ? setTimeout(() => { void killAll(b, true); }, limits.wallMs) : undefined;
  wallTimer?.unref();
  let destroyed: Promise<void> | undefined;

  return {
    id: `${spec.runId}/${spec.rolloutId}`,
    workspaceHostPath: slot.workspace,
    workspacePath,
    homePath,
    modelBaseUrl: isolatedNet ? `http://127.0.0.1:${SANDBOX_PROXY_PORT}/s/${spec.rolloutId}` : spec.modelEndpoint.url,
    ...(isolatedNet ? { modelSocketPath: bwrap ? SANDBOX_PROXY_SOCKET : socketPath } : {}),
    exec: execFor(b, () => destroyed !== undefined),
    ...hostFiles(paths),
    usage: async () => (await cgroupCpuSeconds(slot.cgroups)) ?? {},
    destroy() {
      clearTimeout(wallTimer);
      destroyed ??= slot.holder ? destroyHeld(b, slot.holder, background) : destroyPlain(b);
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
