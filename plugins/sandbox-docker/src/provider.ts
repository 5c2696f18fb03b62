import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { chmod, copyFile, cp, lchown, lstat, mkdir, mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { PassThrough } from 'node:stream';
import {
  checkWorkspacePath, ClawGymError, ErrorCodes, EXEC_OUTPUT_LIMIT_BYTES, execOutput, killGroup, messageOf, namespacePid, ownerAlive, ownerStamp, parseOwner, readOwnerFile, removeTree, SandboxPaths, stopWhen, writeOwnerFile,
  type ExecOptions, type ExecResult, type LimitEnforcement, type ProviderCheck, type Sandbox, type SandboxProvider, type SandboxSpec, type SweepReport,
} from '@clawgym/core';
import Docker from 'dockerode';
import { DockerHost, DockerHosts, handshakeRefusal, isUnreachable, withTimeout, type DockerHostSpec } from './hosts';
import { engineLimitEnforcement } from './limits';
import { hostTar, pullDir, pushDir, pushPaths } from './remote-workspace';
import { TaskImages, type TaskImage } from './task-image';
import { ModelTunnel } from './tunnel';
import { WarmPool } from './warm-pool';

/** Version of the image recipe in `scripts/docker-image.sh`; part of the image tag. */
export const IMAGE_RECIPE = 2;
/** The image `scripts/docker-image.sh` builds on this machine (its node is the host's). */
export const DEFAULT_IMAGE = `clawgym-sandbox:${IMAGE_RECIPE}-node${process.versions.node}`;
/** What the in-container forwarder prints once it listens: no command runs in the sandbox before. */
const FORWARDER_READY = 'clawgym-forwarder-listening';
/** Port of the in-container forwarder to the proxy socket (as in the netns sandbox). */
export const SANDBOX_PROXY_PORT = 4141;

export const WORKSPACE = '/workspace';
export const HOME = '/home/agent';

/**
 * When the workspace a task asks for lies below `/root` (ClawGym-Task's
 * `/root/.openclaw/workspace`): `/root` is closed to other users (0700) in Debian-based images
 * and the sandbox's user is not root, so an empty, open folder of the sandbox is bound over it
 * (a tmpfs would not do: runc gives it the mode of the folder it covers). Nothing of the
 * image's `/root` is needed: HOME is {@link HOME}.
 */
const ROOT_HOME = '/root';
const underRootHome = (workdir: string) => workdir.startsWith(`${ROOT_HOME}/`);
export const PROXY_SOCKET = '/run/clawgym/proxy.sock';
export const NETNS_RUN = '/opt/clawgym/netns-run.js';
/**
 * The container's main process: the loopback forwarder to the proxy socket, for the whole life
 * of the container (started before the sandbox is handed out, so no command pays for it).
 */
const FORWARDER_CMD = ['node', '-e', "require('/opt/clawgym/forwarder.js').startForwarder(process.argv[1], Number(process.argv[2])).then(() => console.log(process.argv[3]), (e) => { console.error(String(e)); process.exit(1); })", PROXY_SOCKET, String(SANDBOX_PROXY_PORT), FORWARDER_READY];
/** The main process of a container on a remote host: it only keeps the container up (the forwarder comes over the tunnel's exec). */
const IDLE_CMD = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];

/** Labels on every container; `sweep` finds leftovers by them. */
export const LABEL_RUN = 'clawgym.run';
export const LABEL_ROLLOUT = 'clawgym.rollout';
export const LABEL_ROOT = 'clawgym.root';
/** The runner that made the container (pid, its start time, host): `sweep` leaves a live owner's containers alone. */
export const LABEL_OWNER = 'clawgym.owner';
const DIR_PREFIX = 'clawgym-docker-';
const MARKER = '.clawgym-docker.json';

/** Options of the `docker` sandbox provider. */
export interface DockerSandboxOptions {
  /** Docker API socket (default: `DOCKER_HOST` when it is `unix://...`, else /var/run/docker.sock). */
  socketPath?: string;
  /**
   * Several Docker engines (instead of `socketPath`): `unix://…`, `tcp://host:port` (with `tls`
   * files), `ssh://user@host`. Each sandbox goes to the answering host with the most free
   * capacity; see `hosts.ts`.
   */
  hosts?: DockerHostSpec[];
  /** How often the hosts' `/_ping` is probed (default 2000 ms). */
  probeMs?: number;
  /** Image to run (default {@link DEFAULT_IMAGE}, built by scripts/docker-image.sh). */
  image?: string;
  /** Numeric `uid[:gid]` processes run as (default 1000:1000). */
  user?: string;
  /** Where the per-sandbox host folders go (default the OS temp folder). */
  tmpDir?: string;
  /** Process limit when the spec sets none (default 1024). */
  defaultPids?: number;
  /**
   * Started containers kept ready per (run, image, limits, bound paths) once one sandbox of
   * that kind was asked for (default 2; 0: start each container when asked). Never reused:
   * each container serves one sandbox and is removed with it.
   */
  warmPool?: number;
  /** Remove spares after this long without a hand-out (default 30 s). */
  warmIdleMs?: number;
}

/** A started container and its host folder, not yet handed out. */
interface Started {
  container: Docker.Container;
  root: string;
  workdir: string;
  path?: string;
  /** The model tunnel of a container on a host that cannot see the proxy's socket. */
  tunnel?: ModelTunnel;
}

/** The Docker API socket from `DOCKER_HOST` (unix:// only) or the default. */
export function dockerSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return host.slice('unix://'.length);
  if (host) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `DOCKER_HOST=${host} is not a unix:// socket`, { hint: `for a remote engine give it in the options: sandbox: { use: 'docker', options: { hosts: ['${host}'] } }` });
  return '/var/run/docker.sock';
}

function parseUser(user: string): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `user must be a numeric uid[:gid], got "${user}"`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

/** netns-run.js and forwarder.js from @clawgym/core's build, copied into each sandbox. */
function netnsRunFiles(): string[] {
  const dir = join(dirname(require.resolve('@clawgym/core/package.json')), 'dist', 'sandbox');
  const files = ['netns-run.js', 'forwarder.js'].map((f) => join(dir, f));
  for (const f of files) if (!existsSync(f)) throw new ClawGymError(ErrorCodes.NOT_BUILT, `${f} is missing`, { hint: 'run npm run build' });
  return files;
}

function statusOf(err: unknown): number | undefined {
  return (err as { statusCode?: number })?.statusCode;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Change the owner of everything under `path` (symlinks themselves, never their targets). */
async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  let st;
  try { st = await lstat(path); } catch { return; }
  if (st.uid !== uid || st.gid !== gid) {
    try {
      await lchown(path, uid, gid);
    } catch {
      // Not root: let the container user write it anyway.
      if (!st.isSymbolicLink()) await chmod(path, st.mode | (st.isDirectory() ? 0o777 : 0o666)).catch(() => {});
    }
  }
  if (st.isDirectory()) {
    for (const e of await readdir(path).catch(() => [] as string[])) await chownTree(join(path, e), uid, gid);
  }
}

interface RawExec {
  exitCode: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes the command wrote on each stream, also past the `maxBytes` it was run with. */
  outBytes: number;
  errBytes: number;
  timedOut: boolean;
}

/** A running container as a {@link Sandbox}. */
class DockerSandbox implements Sandbox {
  readonly id: string;
  readonly homePath = HOME;
  readonly modelBaseUrl: string;
  readonly workspaceHostPath: string;
  private readonly homeHostPath: string;
  /** The workspace and HOME as bound into the container (core's mapping; links are never followed from the host). */
  private readonly paths: SandboxPaths;
  private destroyed?: Promise<void>;
  private owned = false;
  private wallTimer?: NodeJS.Timeout;
  private wallReached = false;
  /** On a host that cannot see our filesystem: nothing is bound, files go through the engine. */
  private readonly remote: boolean;
  private execs = 0;

  constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container,
    private readonly spec: SandboxSpec,
    readonly hostRoot: string,
    private readonly user: { uid: number; gid: number },
    /** The workspace inside: {@link WORKSPACE}, or a task image's WORKDIR. */
    readonly workspacePath: string = WORKSPACE,
    /** PATH inside: the task image's own, or the sandbox image's. */
    private readonly path = '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
    /** Where destroy hands the removal of a frozen container to finish in the background. */
    private readonly background?: (removal: Promise<void>) => void,
    /** The host it runs on, its model tunnel when remote, and what to call once it is gone. */
    readonly placement?: { host: DockerHost; tunnel?: ModelTunnel; release: () => void },
  ) {
    this.id = container.id;
    this.remote = placement ? !placement.host.local : false;
    this.workspaceHostPath = join(hostRoot, 'workspace');
    this.homeHostPath = join(hostRoot, 'home');
    this.paths = new SandboxPaths([{ inside: workspacePath, host: this.workspaceHostPath }, { inside: HOME, host: this.homeHostPath }], workspacePath);
    this.modelBaseUrl = `http://127.0.0.1:${SANDBOX_PROXY_PORT}/s/${spec.rolloutId}`;
    if (spec.limits.wallMs) {
      this.wallTimer = setTimeout(() => {
        this.wallReached = true;
        void container.kill().catch(() => {});
      }, spec.limits.wallMs);
      this.wallTimer.unref();
    }
  }

  async exec(argv: string[], o: ExecOptions = {}): Promise<ExecResult> {
    if (argv.length === 0) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'exec needs a command');
    // Files the host put in the workspace or HOME (the task's setup, before the first command)
    // become the container user's, once: walking the tree on every command cost time in
    // proportion to the workspace. Later host writes go through writeFile/copyIn, which chown.
    if (this.remote) await this.pushOnce();
    else if (!this.owned) {
      this.owned = true;
      await chownTree(this.workspaceHostPath, this.user.uid, this.user.gid);
      await chownTree(this.homeHostPath, this.user.uid, this.user.gid);
    }
    const cwd = o.cwd ? posix.resolve(this.workspacePath, o.cwd) : this.workspacePath;
    const env = { PATH: this.path, HOME, TMPDIR: `${HOME}/tmp`, LANG: 'C.UTF-8', ...this.spec.env, ...o.env };
    // The container's main process is the forwarder to the proxy socket (see FORWARDER_CMD):
    // a command runs as itself, with no Node wrapper to start first.
    const r = await this.run(argv, { env, cwd, stdin: o.stdin, timeoutMs: o.timeoutMs, signal: o.signal, maxBytes: EXEC_OUTPUT_LIMIT_BYTES });
    return { exitCode: r.exitCode, signal: r.signal, stdout: execOutput(r.stdout, r.outBytes), stderr: execOutput(r.stderr, r.errBytes), timedOut: r.timedOut };
  }

  private pushed?: Promise<void>;

  /**
   * On a remote host: what the host put in the workspace and HOME folders (the task's setup)
   * goes into the container once, before anything else touches it, owned by the agent's user.
   */
  private pushOnce(): Promise<void> {
    this.owned = true;
    this.pushed ??= this.engine(async () => {
      // A task image's root is writable: its WORKDIR (maybe made by root) is given to the agent, as a bind-mounted one is.
      const ownTarget = this.spec.environment !== undefined;
      await pushDir(this.container, this.workspaceHostPath, this.workspacePath, this.user, { ownTarget });
      await pushDir(this.container, this.homeHostPath, HOME, this.user, { ownTarget });
    });
    return this.pushed;
  }

  /**
   * Bring the workspace's state to {@link workspaceHostPath}, for the verifier: on a remote host
   * the container's workspace is got back through the archive API (it works on a stopped
   * container too); with a bind-mounted workspace there is nothing to do.
   */
  async sync(): Promise<void> {
    if (!this.remote || !this.owned) return; // untouched: the host folder is still the truth
    await this.engine(() => pullDir(this.container, this.workspacePath, this.workspaceHostPath));
  }

  /** Run a request to the engine; one that finds the host gone marks it down and says so. */
  private async engine<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      throw this.lostError(err) ?? err;
    }
  }

  /** The error to raise when `err` (or the host's state) says the host stopped answering. */
  private lostError(err?: unknown): ClawGymError | undefined {
    const host = this.placement?.host;
    if (!host) return undefined;
    if (err !== undefined && isUnreachable(err)) host.markDown(messageOf(err));
    if (host.healthy) return undefined;
    return new ClawGymError(ErrorCodes.DOCKER_HOST_UNREACHABLE, `Docker host ${host.url} stopped answering (${host.downReason}) while sandbox ${this.spec.rolloutId} ran on it`, { cause: err });
  }

  /**
   * One `docker exec`: demuxed output (each stream kept up to `maxBytes`, unbounded for the
   * provider's own commands: a copy-out's tar), exit code from inspect, the process group
   * killed on timeout or abort.
   */
  private async run(cmd: string[], o: { env?: Record<string, string>; cwd?: string; stdin?: string | Buffer; timeoutMs?: number; signal?: AbortSignal; maxBytes?: number }): Promise<RawExec> {
    const killedResult = (why: string): RawExec => ({ exitCode: null, signal: 'SIGKILL', stdout: Buffer.alloc(0), stderr: Buffer.from(why), outBytes: 0, errBytes: why.length, timedOut: this.wallReached });
    if (this.destroyed) return killedResult('sandbox destroyed\n');
    if (o.signal?.aborted) return killedResult('aborted before start\n');
    const lost = this.lostError();
    if (lost) throw lost;
    // On a remote host the command's PID is the remote machine's: it records its own PID
    // inside, so that a kill can come from inside too (see killExec).
    const tag = `${process.pid}-${++this.execs}`;
    const argv = this.remote ? ['sh', '-c', 'echo $$ > "/tmp/.clawgym-exec-$0"; exec "$@"', tag, ...cmd] : cmd;
    let exec: Docker.Exec;
    try {
      exec = await this.container.exec({
        Cmd: argv, User: `${this.user.uid}:${this.user.gid}`, WorkingDir: o.cwd ?? this.workspacePath,
        Env: o.env ? Object.entries(o.env).map(([k, v]) => `${k}=${v}`) : undefined,
        AttachStdin: o.stdin !== undefined, AttachStdout: true, AttachStderr: true, Tty: false,
      });
    } catch (err) {
      if (this.wallReached || statusOf(err) === 409) return killedResult(this.wallReached ? `sandbox wall-clock limit of ${this.spec.limits.wallMs} ms reached\n` : `${(err as Error).message}\n`);
      throw this.lostError(err) ?? err;
    }
    let stream: NodeJS.ReadWriteStream;
    try {
      stream = await exec.start({ hijack: true, stdin: o.stdin !== undefined });
    } catch (err) {
      // The wall-clock kill can land between creating the exec and starting it.
      if (this.wallReached || statusOf(err) === 409) return killedResult(this.wallReached ? `sandbox wall-clock limit of ${this.spec.limits.wallMs} ms reached\n` : `${(err as Error).message}\n`);
      throw this.lostError(err) ?? err;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const max = o.maxBytes ?? Infinity;
    let outBytes = 0;
    let errBytes = 0;
    stdout.on('data', (d: Buffer) => { outBytes += d.length; if (outBytes <= max) out.push(d); });
    stderr.on('data', (d: Buffer) => { errBytes += d.length; if (errBytes <= max) err.push(d); });
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    this.docker.modem.demuxStream(stream, stdout, stderr);
    if (o.stdin !== undefined) stream.end(o.stdin);

    let killed = false;
    const stop = stopWhen(o, () => { killed = true; void this.killExec(exec, tag); });
    // The host marked down (a probe had no answer): stop waiting for a stream that may never end.
    const down = this.placement?.host.downSignal;
    const onDown = () => (stream as unknown as { destroy?: () => void }).destroy?.();
    down?.addEventListener('abort', onDown, { once: true });
    try {
      await ended;
    } finally {
      stop.clear();
      down?.removeEventListener('abort', onDown);
    }
    let inspectErr: unknown;
    const inspect = () => exec.inspect().catch((e: unknown) => { inspectErr = e; return undefined; });
    let info = await inspect();
    for (let i = 0; i < 50 && info?.Running; i++) {
      await sleep(20);
      info = await inspect();
    }
    // The stream ended because the engine went away, not because the command did.
    const gone = this.lostError(info ? undefined : inspectErr);
    if (gone) throw gone;
    const code = info?.ExitCode ?? null;
    if (killed || this.wallReached) {
      return { exitCode: null, signal: 'SIGKILL', stdout: Buffer.concat(out), stderr: Buffer.concat(err), outBytes, errBytes, timedOut: stop.timedOut || this.wallReached };
    }
    return { exitCode: code, signal: null, stdout: Buffer.concat(out), stderr: Buffer.concat(err), outBytes, errBytes, timedOut: false };
  }

  /**
   * Kill an exec'd process and its process group (runc makes each exec a session leader):
   * from the host by PID, or, when the host may not, from inside as the same user.
   */
  private async killExec(exec: Docker.Exec, tag: string): Promise<void> {
    if (this.remote) {
      // Its PID is the remote machine's: kill its process group from inside, by the PID it wrote.
      await this.run(['sh', '-c', 'kill -KILL -- "-$(cat "/tmp/.clawgym-exec-$0")"', tag], {}).catch(() => {});
      return;
    }
    for (let i = 0; i < 100; i++) {
      const info = await exec.inspect().catch(() => undefined);
      if (!info) return;
      if (!info.Running) { if (info.ExitCode !== null) return; await sleep(10); continue; }
      const pid = info.Pid;
      if (!pid) { await sleep(10); continue; }
      if (killGroup(pid) !== 'denied') return;
      // Not ours to signal: kill it from inside, by its PID in the container's namespace.
      const nspid = namespacePid(pid);
      if (nspid) await this.run(['kill', '-KILL', '--', `-${nspid}`], {}).catch(() => {});
      return;
    }
  }

  /**
   * The host path of a sandbox path under the workspace or HOME, when it is safe to use from
   * the host: no link on the way (it resolves in the container, and the host would follow it
   * out of the sandbox); missing folders are made (as the container user) when `create`.
   */
  private async hostPathOf(sandboxPath: string, create: boolean): Promise<string | undefined> {
    // Remote: nothing of the container is on our filesystem; files go through commands inside.
    if (this.remote) { await this.pushOnce(); return undefined; }
    return this.paths.linkFreeHostPath(sandboxPath, create ? async (dir) => {
      await mkdir(dir);
      await lchown(dir, this.user.uid, this.user.gid).catch(() => {});
    } : undefined);
  }

  async writeFile(sandboxPath: string, data: string | Buffer): Promise<void> {
    const host = await this.hostPathOf(sandboxPath, true);
    if (host) {
      const fh = await open(host, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
      try { await fh.writeFile(data); } finally { await fh.close(); }
      await lchown(host, this.user.uid, this.user.gid).catch(() => {});
      return;
    }
    const abs = posix.resolve(this.workspacePath, sandboxPath);
    const r = await this.run(['sh', '-c', 'mkdir -p "$(dirname "$1")" && cat > "$1"', 'sh', abs], { stdin: data, env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    if (r.exitCode !== 0) throw new ClawGymError(ErrorCodes.SANDBOX_FILE_FAILED, `writeFile ${abs}: ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`);
  }

  async copyIn(hostPath: string, sandboxPath: string): Promise<void> {
    const host = await this.hostPathOf(sandboxPath, true);
    if (host && !existsSync(host)) {
      await cp(hostPath, host, { recursive: true, preserveTimestamps: true });
      await chownTree(host, this.user.uid, this.user.gid);
      return;
    }
    // Elsewhere, or onto something that exists (which may hold the agent's links): unpack
    // inside, as the container user.
    const abs = posix.resolve(this.workspacePath, sandboxPath);
    const staging = await mkdtemp(join(tmpdir(), 'clawgym-copyin-'));
    try {
      await cp(hostPath, join(staging, 'x'), { recursive: true, preserveTimestamps: true });
      const tar = await hostTar(['-C', staging, '-c', 'x']);
      const script = 'set -e; t=$(mktemp -d "$(dirname "$1")/.copyin.XXXXXX"); tar -x -f - -C "$t"; rm -rf "$1"; mv "$t/x" "$1"; rmdir "$t"';
      const mk = await this.run(['mkdir', '-p', posix.dirname(abs)], {});
      if (mk.exitCode !== 0) throw new ClawGymError(ErrorCodes.SANDBOX_FILE_FAILED, `copyIn ${abs}: ${mk.stderr.toString().trim()}`);
      const r = await this.run(['sh', '-c', script, 'sh', abs], { stdin: tar, env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
      if (r.exitCode !== 0) throw new ClawGymError(ErrorCodes.SANDBOX_FILE_FAILED, `copyIn ${abs}: ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  async copyOut(sandboxPath: string, hostPath: string): Promise<void> {
    const host = await this.hostPathOf(sandboxPath, false);
    if (host) {
      await cp(host, hostPath, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      return;
    }
    // Through a link, or outside the mounts: read it inside (links resolve in the container).
    const abs = posix.resolve(this.workspacePath, sandboxPath);
    const r = await this.run(['sh', '-c', 'cd "$(dirname "$1")" && tar -c -h -f - "$(basename "$1")"', 'sh', abs], { env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    if (r.exitCode !== 0) throw new ClawGymError(ErrorCodes.SANDBOX_FILE_FAILED, `copyOut ${abs}: ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`);
    const staging = await mkdtemp(join(tmpdir(), 'clawgym-copyout-'));
    try {
      await hostTar(['-C', staging, '-x', '--no-same-owner'], r.stdout);
      await cp(join(staging, posix.basename(abs)), hostPath, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  destroy(): Promise<void> {
    this.destroyed ??= (async () => {
      clearTimeout(this.wallTimer);
      this.placement?.tunnel?.close();
      this.placement?.release();
      const host = this.placement?.host;
      const removal = async () => {
        try {
          // A host that stopped answering keeps its container until the host's sweep (gc).
          if (!host || host.healthy) await removeContainer(this.container);
        } finally {
          await removeTree(this.hostRoot);
        }
      };
      if (host && !host.healthy) return removal();
      // Freeze first (the cgroup freezer: every process inside stops at once, ~50 ms), so that
      // nothing runs or writes once destroy returns; removing the container and its folder
      // (100-300 ms of daemon work here) then happens off the rollout's path, tracked by the
      // provider: close() and sweep() wait for it, and a crash leaves a labelled container
      // that sweep and gc remove.
      if (this.background && await this.container.pause().then(() => true, () => false)) this.background(removal());
      else await removal();
    })();
    return this.destroyed;
  }
}

/**
 * Wait until the container's forwarder says it listens (its first line of output). The log
 * stream with `follow` replays what was printed before it was opened, so nothing is missed.
 */
async function forwarderListening(container: Docker.Container, rolloutId: string, timeoutMs = 30_000): Promise<void> {
  const stream = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream & { destroy(): void };
  let seen = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const gone = (why: string) => reject(new ClawGymError(ErrorCodes.SANDBOX_GONE,
        `sandbox ${rolloutId}: the model forwarder in its container ${why}${seen.trim() ? `; it printed: ${seen.replace(/[^\x20-\x7e\n]/g, '').trim().slice(0, 500)}` : ''}`,
        { hint: 'The sandbox image needs node on PATH and /opt/clawgym/forwarder.js (rebuild it with scripts/docker-image.sh).' }));
      const timer = setTimeout(() => gone(`did not listen within ${timeoutMs} ms`), timeoutMs);
      stream.on('data', (d: Buffer) => {
        seen += d.toString('latin1');
        if (seen.includes(FORWARDER_READY)) { clearTimeout(timer); resolve(); }
      });
      stream.once('error', (err) => { clearTimeout(timer); gone(`could not be watched (${messageOf(err)})`); });
      stream.once('end', () => { clearTimeout(timer); gone('exited before it listened'); });
    });
  } finally {
    stream.destroy();
  }
}

async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: true });
  } catch (err) {
    const status = statusOf(err);
    if (status === 404) return;
    if (status === 409) { // removal already in progress
      for (let i = 0; i < 100; i++) {
        await sleep(100);
        try { await container.inspect(); } catch (e) { if (statusOf(e) === 404) return; }
      }
    }
    throw err;
  }
}

/**
 * Remove a volume; one already gone is fine. A container that held it can still be "removing"
 * for a moment after its removal returned (409 "volume is in use"): tried again for up to 5 s.
 */
async function removeVolume(docker: Docker, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await docker.getVolume(name).remove();
      return;
    } catch (err) {
      if (statusOf(err) === 404) return;
      if (statusOf(err) !== 409 || attempt >= 50) throw err;
      await sleep(100);
    }
  }
}

/**
 * The read-only paths a sandbox asked for, as folders to mount: a folder asked for whole, or a
 * file's folder holding the listed files only (`entries`), with the mount points of folders
 * below it (`mountPoints`, empty folders: a read-only volume cannot have them made later).
 */
async function readOnlyFolders(readOnly: readonly string[]): Promise<Map<string, { entries?: string[]; mountPoints: string[] }>> {
  const dirs = new Map<string, { entries?: string[]; mountPoints: string[] }>();
  for (const p of readOnly) {
    const st = await stat(p).catch(() => undefined);
    if (!st) continue; // as with binds: a path that does not exist is skipped
    if (st.isDirectory()) { dirs.set(p, { mountPoints: [] }); continue; }
    const parent = dirname(p);
    const d = dirs.get(parent);
    if (d && !d.entries) continue;
    dirs.set(parent, { entries: [...(d?.entries ?? []), basename(p)], mountPoints: [] });
  }
  for (const [dir, d] of dirs) {
    if (!d.entries) continue;
    for (const inner of dirs.keys()) {
      if (!inner.startsWith(`${dir}/`)) continue;
      const parts = inner.slice(dir.length + 1).split('/');
      for (let i = 1; i <= parts.length; i++) d.mountPoints.push(parts.slice(0, i).join('/'));
    }
  }
  return dirs;
}

function containerName(spec: SandboxSpec): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 60);
  return `clawgym-${clean(spec.runId)}-${clean(spec.rolloutId)}-${randomBytes(3).toString('hex')}`;
}

/** Docker containers as sandboxes: one per rollout, no network but the model socket, non-root, limits. */
export class DockerSandboxProvider implements SandboxProvider {
  readonly name = 'docker';
  /** Tasks with their own image (Harbor's environment/Dockerfile) run in it. */
  readonly supportsEnvironments = true;
  /** The first host's client (the only one without `hosts`). */
  readonly docker: Docker;
  readonly image: string;
  /** The first host's socket ('' when it is not a Unix socket). */
  readonly socketPath: string;
  /** The engines sandboxes go to (one without `hosts`). */
  readonly hosts: DockerHosts;
  private readonly user: { uid: number; gid: number };
  private readonly tmpDir: string;
  private readonly taskImages = new Map<DockerHost, TaskImages>();
  private readonly pools = new Map<string, WarmPool<Started>>();
  private readonly removals = new Set<Promise<void>>();

  constructor(private readonly options: DockerSandboxOptions = {}) {
    if (options.hosts && options.socketPath) throw new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, 'give socketPath or hosts, not both', { hint: "hosts: ['unix:///var/run/docker.sock', 'tcp://10.0.0.2:2376', …]" });
    if (options.hosts) {
      this.hosts = DockerHosts.parse(options.hosts, { probeMs: options.probeMs });
    } else {
      const socketPath = options.socketPath ?? dockerSocketPath();
      this.hosts = new DockerHosts([new DockerHost(`unix://${socketPath}`, { url: `unix://${socketPath}`, local: true }, new Docker({ socketPath }))], { probeMs: options.probeMs });
    }
    const first = this.hosts.list[0]!;
    this.docker = first.docker;
    this.socketPath = first.url.startsWith('unix://') ? first.url.slice('unix://'.length) : '';
    this.image = options.image ?? DEFAULT_IMAGE;
    this.user = parseUser(options.user ?? '1000:1000');
    this.tmpDir = options.tmpDir ?? tmpdir();
  }

  private imagesOf(host: DockerHost): TaskImages {
    let t = this.taskImages.get(host);
    if (!t) this.taskImages.set(host, t = new TaskImages(host.docker, WORKSPACE));
    return t;
  }

  async describeIsolation(): Promise<string> {
    const engines = await Promise.all(this.hosts.list.map(async (h) => {
      const where = this.hosts.list.length > 1 || !h.local ? `${h.url}${h.local ? '' : ' (remote: workspace by archive, model by exec tunnel)'} ` : '';
      try {
        return `${where}engine ${(await h.docker.version()).Version}`;
      } catch (err) {
        return `${where}daemon unreachable: ${(err as Error).message}`;
      }
    }));
    const engine = engines.join('; ');
    return `docker (${engine}): a container per sandbox from ${this.image}, no network but the model socket (NetworkMode none), `
      + `user ${this.user.uid}:${this.user.gid}, all capabilities dropped, no-new-privileges, read-only root, cpu/memory/pids limits`;
  }

  /**
   * For `clawgym doctor`: every host answers (within 5 s), logs us in, and has the sandbox
   * image; what is wrong is said per host, with the command that fixes it.
   */
  /** Its commands run on the image's system: `clawgym doctor` looks for harness CLIs in it. */
  systemOf(): string {
    return `image ${this.image}`;
  }

  async check(): Promise<ProviderCheck> {
    const results = await Promise.all(this.hosts.list.map(async (h): Promise<{ ok: boolean; line: string; fix?: string }> => {
      let version: string;
      try {
        version = (await withTimeout(h.docker.version(), 5_000, `${h.url} /version`)).Version;
      } catch (err) {
        const refused = handshakeRefusal(err, h.url);
        if (refused) return { ok: false, line: `${refused.message} (${refused.hint})` };
        const local = h.url.startsWith('unix://');
        return { ok: false, line: `${h.url}: no Docker engine answers (${messageOf(err)})`, fix: local ? 'apt-get install -y docker.io, then start dockerd (or set DOCKER_HOST / socketPath to a running engine)' : undefined };
      }
      try {
        await withTimeout(h.docker.getImage(this.image).inspect(), 5_000, `${h.url} image inspect`);
      } catch (err) {
        if (statusOf(err) !== 404) return { ok: false, line: `${h.url}: engine ${version}, but the image check failed (${messageOf(err)})` };
        // The OpenClaw image (Debian, Python, Node 24, the OpenClaw and Claude Code CLIs) has its own build script.
        const script = this.image.startsWith('clawgym-openclaw:') ? 'scripts/openclaw-image.sh' : 'scripts/docker-image.sh';
        return { ok: false, line: `${h.url}: engine ${version}, image ${this.image} missing`, fix: `DOCKER_HOST=${h.url} bash ${script}` };
      }
      return { ok: true, line: `${h.url}: engine ${version}, image ${this.image}` };
    }));
    const fixes = results.map((r) => r.fix).filter((f): f is string => f !== undefined);
    return { ok: results.every((r) => r.ok), reason: results.map((r) => r.line).join('; '), ...(fixes.length ? { install: [...new Set(fixes)].join(' && ') } : {}) };
  }

  /** How the first host's engine enforces each limit, by its own account. */
  limitEnforcement(): Promise<LimitEnforcement> {
    return engineLimitEnforcement(this.docker);
  }

  async create(spec: SandboxSpec): Promise<Sandbox> {
    const socketPath = spec.modelEndpoint.socketPath;
    if (!socketPath) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'the docker sandbox reaches the model through a Unix socket: spec.modelEndpoint.socketPath is required', { hint: 'listen on one with ServingProxy.listenUnix and pass its path' });
    const sock = await stat(socketPath).catch(() => undefined);
    if (!sock?.isSocket()) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `${socketPath} is not a Unix socket (the proxy's listenUnix)`);
    // Connecting needs write permission on the socket; the container user is not its owner.
    if (sock.uid !== this.user.uid && (sock.mode & 0o006) !== 0o006) await chmod(socketPath, (sock.mode & 0o777) | 0o006);
    // A task with its own image: built (once per content hash) before anything else is made.
    // The answering host with the most free capacity; one that fails at the connection is
    // marked down and the next one is tried (the rollout has not started: nothing is lost).
    const tried = new Set<DockerHost>();
    for (;;) {
      const host = await this.hosts.pick(tried);
      try {
        return await this.createOn(host, spec, socketPath);
      } catch (err) {
        const refused = handshakeRefusal(err, host.url);
        if (refused) throw refused;
        if (!isUnreachable(err)) throw err;
        host.markDown(messageOf(err));
        tried.add(host);
      }
    }
  }

  /** Make the sandbox on `host`, which {@link DockerHosts.pick} counted it on. */
  private async createOn(host: DockerHost, spec: SandboxSpec, socketPath: string): Promise<Sandbox> {
    let released = false;
    const release = () => { if (!released) { released = true; host.inUse--; } };
    try {
      if (spec.workspacePath !== undefined) checkWorkspacePath(spec.workspacePath, HOME);
      const taskImage: TaskImage | undefined = spec.environment
        ? await this.imagesOf(host).prepare(spec.environment, { runId: spec.runId, logDir: spec.logDir, labels: { [LABEL_RUN]: spec.runId, [LABEL_ROLLOUT]: spec.rolloutId } })
        : undefined;
      const started = await this.poolFor(host, spec, socketPath, taskImage).take();
      try {
        // The marker now names the rollout the container serves (sweep and gc read it).
        await writeOwnerFile(join(started.root, MARKER), { runId: spec.runId, rolloutId: spec.rolloutId });
      } catch (err) {
        started.tunnel?.close();
        await this.dispose(started);
        throw err;
      }
      host.handedOut++;
      return new DockerSandbox(host.docker, started.container, spec, started.root, this.user, started.workdir, started.path, (r) => this.track(r), { host, tunnel: started.tunnel, release });
    } catch (err) {
      release();
      throw err;
    }
  }

  /** The warm pool of containers made the way `spec` needs on `host` (what is fixed when a container is created). */
  private poolFor(host: DockerHost, spec: SandboxSpec, socketPath: string, taskImage: TaskImage | undefined): WarmPool<Started> {
    const { cpus, memoryMb, pids } = spec.limits;
    const key = JSON.stringify([host.url, spec.runId, socketPath, taskImage?.tag ?? this.image, spec.workspacePath ?? null, cpus, memoryMb, pids, [...new Set(spec.readOnlyPaths ?? [])].sort()]);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new WarmPool<Started>({
        make: () => this.start(host, spec, socketPath, taskImage),
        dispose: (s) => this.dispose(s),
        alive: async (s) => (await s.container.inspect().catch(() => undefined))?.State?.Running === true,
        size: this.options.warmPool ?? 2,
        idleMs: this.options.warmIdleMs ?? 30_000,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  private async dispose(s: Started): Promise<void> {
    s.tunnel?.close();
    await removeContainer(s.container).catch(() => undefined);
    await removeTree(s.root);
  }

  private track(removal: Promise<void>): void {
    const p = removal.catch(() => undefined).finally(() => this.removals.delete(p));
    this.removals.add(p);
  }

  /** Wait until every destroyed sandbox's container and folder are gone. */
  async settled(): Promise<void> {
    while (this.removals.size) await Promise.all([...this.removals]);
  }

  /** Remove the spare containers of every warm pool, and wait for removals in flight. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
    await this.settled();
    // The run's read-only volumes, now that no container of ours holds them.
    const volumes = [...this.roVolumes.values()];
    this.roVolumes.clear();
    await Promise.all(volumes.map(async (v) => { await v.ready.catch(() => undefined); await removeVolume(v.host.docker, v.name); }));
    this.hosts.close();
  }

  /** Create and start one container for sandboxes like `spec` (not yet handed out). */
  /** Read-only volumes of a run on a remote host, by folder: made and filled once, shared by its sandboxes. */
  private readonly roVolumes = new Map<string, { host: DockerHost; name: string; ready: Promise<void> }>();

  /**
   * The read-only folders as volumes on `host`, each made once per run and folder (a harness's
   * CLI is hundreds of MB: copying it into every container made each sandbox cost seconds), filled
   * through a container that only holds it, removed by {@link close} or a later sweep.
   */
  private async readOnlyVolumes(host: DockerHost, runId: string, owner: ReturnType<typeof ownerStamp>, dirs: Map<string, { entries?: string[]; mountPoints: string[] }>): Promise<Docker.MountSettings[]> {
    const mounts: Docker.MountSettings[] = [];
    for (const [dir, { entries, mountPoints }] of dirs) {
      const key = JSON.stringify([host.url, runId, dir, entries ?? null, mountPoints]);
      let v = this.roVolumes.get(key);
      if (!v) {
        const name = `clawgym-ro-${runId.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 40)}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
        const ready = (async () => {
          await host.docker.createVolume({ Name: name, Labels: { [LABEL_RUN]: runId, [LABEL_OWNER]: JSON.stringify(owner) } });
          const filler = await host.docker.createContainer({
            Image: this.image, Cmd: ['true'], Labels: { [LABEL_RUN]: runId, [LABEL_OWNER]: JSON.stringify(owner) },
            HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: name, Target: dir }] },
          });
          try {
            await pushPaths(filler, [{ host: dir, target: dir, entries, mountPoints }]);
          } finally {
            await filler.remove({ force: true }).catch(() => undefined);
          }
        })();
        v = { host, name, ready };
        this.roVolumes.set(key, v);
        // A failed fill is tried again by the next sandbox, not remembered.
        ready.catch(() => { if (this.roVolumes.get(key) === v) this.roVolumes.delete(key); });
      }
      await v.ready;
      mounts.push({ Type: 'volume', Source: v.name, Target: dir, ReadOnly: true });
    }
    return mounts;
  }

  private async start(host: DockerHost, spec: SandboxSpec, socketPath: string, taskImage: TaskImage | undefined): Promise<Started> {
    const files = host.local ? netnsRunFiles() : [];
    const workdir = spec.workspacePath ?? taskImage?.workdir ?? WORKSPACE;
    const root = await mkdtemp(join(this.tmpDir, `${DIR_PREFIX}${spec.runId.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 40)}-`));
    try {
      const owner = ownerStamp();
      await writeOwnerFile(join(root, MARKER), { runId: spec.runId }, owner);
      const workspace = join(root, 'workspace');
      const home = join(root, 'home');
      const opt = join(root, 'opt');
      await mkdir(workspace);
      await mkdir(join(home, 'tmp'), { recursive: true });
      await mkdir(opt);
      const rootHome = join(root, 'root-home');
      if (underRootHome(workdir)) {
        if (!host.local) throw new ClawGymError(ErrorCodes.SANDBOX_UNSUPPORTED, `the workspace path ${workdir} lies in /root, which a sandbox on the remote Docker host ${host.url} cannot open to its user`, { hint: 'run such tasks on a local Docker host or the local (bubblewrap) sandbox' });
        await mkdir(rootHome, { mode: 0o755 });
        await chmod(rootHome, 0o755);
      }
      for (const f of files) await copyFile(f, join(opt, basename(f)));
      const readOnly = [...new Set(spec.readOnlyPaths ?? [])];
      // A remote host sees none of our folders: the workspace and HOME are volumes of this
      // container, filled through the archive API; the read-only paths (a harness's CLI, a
      // plugin's script) are volumes of the run on that host, filled once, mounted read-only.
      const remote = host.local ? undefined : {
        mounts: [
          ...[workdir, HOME].map((Target) => ({ Type: 'volume' as const, Source: '', Target })),
          ...await this.readOnlyVolumes(host, spec.runId, owner, await readOnlyFolders(readOnly)),
        ],
      };
      // The image's WORKDIR as the task built it, in the workspace that is bound over it.
      if (taskImage?.files.length) await hostTar(['-x', '-C', workspace, '--strip-components=1', '--no-same-owner'], taskImage.files);
      await chownTree(workspace, this.user.uid, this.user.gid);
      await chownTree(home, this.user.uid, this.user.gid);

      const { cpus, memoryMb, pids } = spec.limits;
      const memory = memoryMb ? Math.round(memoryMb * 1024 * 1024) : undefined;
      // Only what every command shares: a rollout's own environment comes with each exec.
      const baseEnv = { HOME, TMPDIR: `${HOME}/tmp`, LANG: 'C.UTF-8' };
      let container: Docker.Container;
      try {
        container = await host.docker.createContainer({
          name: containerName(spec),
          Image: taskImage?.tag ?? this.image,
          Cmd: remote ? IDLE_CMD : FORWARDER_CMD,
          User: `${this.user.uid}:${this.user.gid}`,
          WorkingDir: workdir,
          Hostname: 'sandbox',
          Env: Object.entries(baseEnv).map(([k, v]) => `${k}=${v}`),
          Labels: { [LABEL_RUN]: spec.runId, [LABEL_ROOT]: root, [LABEL_OWNER]: JSON.stringify(owner) },
          HostConfig: {
            NetworkMode: 'none',
            AutoRemove: false,
            Init: true,
            // A task image's setup may expect to change files outside its WORKDIR (install a
            // package, edit /etc): its container layer is writable, and thrown away with it.
            ReadonlyRootfs: !taskImage,
            CapDrop: ['ALL'],
            SecurityOpt: ['no-new-privileges'],
            Tmpfs: { '/tmp': 'rw,nosuid,nodev,mode=1777', '/var/tmp': 'rw,nosuid,nodev,mode=1777' },
            // A remote host sees none of our folders: volumes, filled through the archive API.
            Mounts: remote?.mounts ?? [
              ...(underRootHome(workdir) ? [{ Type: 'bind' as const, Source: rootHome, Target: ROOT_HOME }] : []),
              { Type: 'bind', Source: workspace, Target: workdir },
              { Type: 'bind', Source: home, Target: HOME },
              { Type: 'bind', Source: opt, Target: '/opt/clawgym', ReadOnly: true },
              { Type: 'bind', Source: socketPath, Target: PROXY_SOCKET },
              // Host folders harnesses need (their CLI, a plugin's script), at the same path, read-only.
              ...[...new Set(spec.readOnlyPaths ?? [])].map((p) => ({ Type: 'bind' as const, Source: p, Target: p, ReadOnly: true })),
            ],
            NanoCpus: cpus ? Math.round(cpus * 1e9) : undefined,
            Memory: memory,
            MemorySwap: memory, // no swap beyond the limit
            PidsLimit: pids ?? this.options.defaultPids ?? 1024,
          },
        });
      } catch (err) {
        if (statusOf(err) === 404) throw new ClawGymError(ErrorCodes.SANDBOX_IMAGE_MISSING, `image ${taskImage?.tag ?? this.image} not found on ${host.url}`, { hint: `build it with DOCKER_HOST=${host.url} scripts/docker-image.sh` });
        throw err;
      }
      let tunnel: ModelTunnel | undefined;
      try {
        await container.start();
        // The forwarder (a Node process) takes tens of milliseconds to listen: a harness
        // started before it would find nothing on the model port (ECONNREFUSED, no call made).
        if (!remote) await forwarderListening(container, spec.rolloutId);
        // The model endpoint of a remote container: its forwarder carried over an exec stream.
        else tunnel = await ModelTunnel.open(host.docker, container, { proxySocket: socketPath, port: SANDBOX_PROXY_PORT, user: `${this.user.uid}:${this.user.gid}` });
      } catch (err) {
        tunnel?.close();
        await removeContainer(container).catch(() => {});
        throw err;
      }
      return { container, root, workdir, path: taskImage?.path, tunnel };
    } catch (err) {
      await removeTree(root);
      throw err;
    }
  }

  async sweep(runId?: string): Promise<SweepReport> {
    await this.settled(); // this process's own removals are not leftovers
    const removed: string[] = [];
    for (const host of this.hosts.list) await this.sweepHost(host, runId, removed);
    // Folders of sandboxes whose container was never created or is already gone.
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      if (!name.startsWith(DIR_PREFIX)) continue;
      const dir = join(this.tmpDir, name);
      const marker = await readOwnerFile<{ runId?: string }>(join(dir, MARKER));
      if (!marker) continue;
      if (runId !== undefined && marker.runId !== runId) continue;
      if (ownerAlive(marker)) continue;
      await removeTree(dir);
      removed.push(`dir ${dir}`);
    }
    return { removed };
  }

  /** A dead runner's containers on one host (a host that does not answer is left for a later sweep). */
  private async sweepHost(host: DockerHost, runId: string | undefined, removed: string[]): Promise<void> {
    let containers: Docker.ContainerInfo[];
    try {
      containers = await host.docker.listContainers({ all: true, filters: { label: [runId === undefined ? LABEL_RUN : `${LABEL_RUN}=${runId}`] } });
    } catch (err) {
      if (this.hosts.list.length > 1 && isUnreachable(err)) { host.markDown(messageOf(err)); return; }
      throw err;
    }
    for (const c of containers) {
      // Only what a dead runner left: a live run's containers are in use (gc beside a running run).
      if (ownerAlive(parseOwner(c.Labels[LABEL_OWNER]) ?? {})) continue;
      await removeContainer(host.docker.getContainer(c.Id));
      removed.push(`container ${c.Names[0]?.replace(/^\//, '') ?? c.Id}`);
      const root = c.Labels[LABEL_ROOT];
      if (root && basename(root).startsWith(DIR_PREFIX) && existsSync(root)) {
        await removeTree(root);
        removed.push(`dir ${root}`);
      }
    }
    // A dead run's read-only volumes (its containers are gone by now).
    const { Volumes: volumes } = await host.docker.listVolumes({ filters: { label: [runId === undefined ? LABEL_RUN : `${LABEL_RUN}=${runId}`] } });
    for (const v of volumes ?? []) {
      if (ownerAlive(parseOwner(v.Labels?.[LABEL_OWNER]) ?? {})) continue;
      await removeVolume(host.docker, v.Name);
      removed.push(`volume ${v.Name}`);
    }
  }
}

/** A `docker` sandbox provider. */
export function dockerSandboxProvider(options: DockerSandboxOptions = {}): DockerSandboxProvider {
  return new DockerSandboxProvider(options);
}
