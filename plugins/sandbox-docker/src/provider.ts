import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, cp, lchown, lstat, mkdir, mkdtemp, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { PassThrough } from 'node:stream';
import { ClawGymError, ErrorCodes, ownerAlive, ownerStamp, type ExecOptions, type ExecResult, type OwnerStamp, type Sandbox, type SandboxProvider, type SandboxSpec, type SweepReport } from '@clawgym/core';
import Docker from 'dockerode';
import { TaskImages, type TaskImage } from './task-image';
import { WarmPool } from './warm-pool';

/** Version of the image recipe in `scripts/docker-image.sh`; part of the image tag. */
export const IMAGE_RECIPE = 2;
/** The image `scripts/docker-image.sh` builds on this machine (its node is the host's). */
export const DEFAULT_IMAGE = `clawgym-sandbox:${IMAGE_RECIPE}-node${process.versions.node}`;
/** Port of the in-container forwarder to the proxy socket (as in the netns sandbox). */
export const SANDBOX_PROXY_PORT = 4141;

export const WORKSPACE = '/workspace';
export const HOME = '/home/agent';
export const PROXY_SOCKET = '/run/clawgym/proxy.sock';
export const NETNS_RUN = '/opt/clawgym/netns-run.js';
/**
 * The container's main process: the loopback forwarder to the proxy socket, for the whole life
 * of the container (started before the sandbox is handed out, so no command pays for it).
 */
const FORWARDER_CMD = ['node', '-e', "require('/opt/clawgym/forwarder.js').startForwarder(process.argv[1], Number(process.argv[2]))", PROXY_SOCKET, String(SANDBOX_PROXY_PORT)];

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
}

/** The Docker API socket from `DOCKER_HOST` (unix:// only) or the default. */
export function dockerSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return host.slice('unix://'.length);
  if (host) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `DOCKER_HOST=${host} is not a unix:// socket: the docker sandbox bind-mounts host folders, so it needs a local daemon`, { hint: 'remote Docker hosts are designed, not built (docs/sandboxes.md)' });
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

/** Run `tar` on the host with stdin/stdout as buffers. */
function hostTar(args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Without input tar's stdin is closed: writing to a pipe tar may already have left raced
    // its exit (EPIPE). With input, a tar that stops reading says why through its exit code.
    const child = spawn('tar', args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`tar ${args.join(' ')}: ${err.trim()}`))));
    if (input) child.stdin!.on('error', () => undefined).end(input);
  });
}

interface RawExec {
  exitCode: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
}

/** A running container as a {@link Sandbox}. */
class DockerSandbox implements Sandbox {
  readonly id: string;
  readonly homePath = HOME;
  readonly modelBaseUrl: string;
  readonly workspaceHostPath: string;
  private readonly homeHostPath: string;
  private destroyed?: Promise<void>;
  private owned = false;
  private wallTimer?: NodeJS.Timeout;
  private wallReached = false;

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
  ) {
    this.id = container.id;
    this.workspaceHostPath = join(hostRoot, 'workspace');
    this.homeHostPath = join(hostRoot, 'home');
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
    if (!this.owned) {
      this.owned = true;
      await chownTree(this.workspaceHostPath, this.user.uid, this.user.gid);
      await chownTree(this.homeHostPath, this.user.uid, this.user.gid);
    }
    const cwd = o.cwd ? posix.resolve(this.workspacePath, o.cwd) : this.workspacePath;
    const env = { PATH: this.path, HOME, TMPDIR: `${HOME}/tmp`, LANG: 'C.UTF-8', ...this.spec.env, ...o.env };
    // The container's main process is the forwarder to the proxy socket (see FORWARDER_CMD):
    // a command runs as itself, with no Node wrapper to start first.
    const r = await this.run(argv, { env, cwd, stdin: o.stdin, timeoutMs: o.timeoutMs, signal: o.signal });
    return { exitCode: r.exitCode, signal: r.signal, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), timedOut: r.timedOut };
  }

  /** One `docker exec`: demuxed output, exit code from inspect, the process group killed on timeout or abort. */
  private async run(cmd: string[], o: { env?: Record<string, string>; cwd?: string; stdin?: string | Buffer; timeoutMs?: number; signal?: AbortSignal }): Promise<RawExec> {
    const killedResult = (why: string): RawExec => ({ exitCode: null, signal: 'SIGKILL', stdout: Buffer.alloc(0), stderr: Buffer.from(why), timedOut: this.wallReached });
    if (this.destroyed) return killedResult('sandbox destroyed\n');
    if (o.signal?.aborted) return killedResult('aborted before start\n');
    let exec: Docker.Exec;
    try {
      exec = await this.container.exec({
        Cmd: cmd, User: `${this.user.uid}:${this.user.gid}`, WorkingDir: o.cwd ?? this.workspacePath,
        Env: o.env ? Object.entries(o.env).map(([k, v]) => `${k}=${v}`) : undefined,
        AttachStdin: o.stdin !== undefined, AttachStdout: true, AttachStderr: true, Tty: false,
      });
    } catch (err) {
      if (this.wallReached || statusOf(err) === 409) return killedResult(this.wallReached ? `sandbox wall-clock limit of ${this.spec.limits.wallMs} ms reached\n` : `${(err as Error).message}\n`);
      throw err;
    }
    let stream: NodeJS.ReadWriteStream;
    try {
      stream = await exec.start({ hijack: true, stdin: o.stdin !== undefined });
    } catch (err) {
      // The wall-clock kill can land between creating the exec and starting it.
      if (this.wallReached || statusOf(err) === 409) return killedResult(this.wallReached ? `sandbox wall-clock limit of ${this.spec.limits.wallMs} ms reached\n` : `${(err as Error).message}\n`);
      throw err;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (d: Buffer) => out.push(d));
    stderr.on('data', (d: Buffer) => err.push(d));
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    this.docker.modem.demuxStream(stream, stdout, stderr);
    if (o.stdin !== undefined) stream.end(o.stdin);

    let killed = false;
    let timedOut = false;
    const kill = () => { killed = true; void this.killExec(exec); };
    const timer = o.timeoutMs ? setTimeout(() => { timedOut = true; kill(); }, o.timeoutMs) : undefined;
    o.signal?.addEventListener('abort', kill, { once: true });
    try {
      await ended;
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', kill);
    }
    let info = await exec.inspect().catch(() => undefined);
    for (let i = 0; i < 50 && info?.Running; i++) {
      await sleep(20);
      info = await exec.inspect().catch(() => undefined);
    }
    const code = info?.ExitCode ?? null;
    if (killed || this.wallReached) {
      return { exitCode: null, signal: 'SIGKILL', stdout: Buffer.concat(out), stderr: Buffer.concat(err), timedOut: timedOut || this.wallReached };
    }
    return { exitCode: code, signal: null, stdout: Buffer.concat(out), stderr: Buffer.concat(err), timedOut: false };
  }

  /**
   * Kill an exec'd process and its process group (runc makes each exec a session leader):
   * from the host by PID, or, when the host may not, from inside as the same user.
   */
  private async killExec(exec: Docker.Exec): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const info = await exec.inspect().catch(() => undefined);
      if (!info) return;
      if (!info.Running) { if (info.ExitCode !== null) return; await sleep(10); continue; }
      const pid = info.Pid;
      if (!pid) { await sleep(10); continue; }
      try {
        process.kill(-pid, 'SIGKILL');
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ESRCH') return;
      }
      // EPERM: kill it from inside, by its PID in the container's namespace.
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/).pop();
      if (nspid) await this.run(['kill', '-KILL', '--', `-${nspid}`], {}).catch(() => {});
      return;
    }
  }

  /** The host path of a sandbox path under the workspace or HOME, when it is safe to use from the host. */
  private async hostPathOf(sandboxPath: string, create: boolean): Promise<string | undefined> {
    const abs = posix.resolve(this.workspacePath, sandboxPath);
    const mounts: Array<[string, string]> = [[this.workspacePath, this.workspaceHostPath], [HOME, this.homeHostPath]];
    for (const [inside, host] of mounts) {
      if (abs !== inside && !abs.startsWith(`${inside}/`)) continue;
      const parts = abs.slice(inside.length).split('/').filter(Boolean);
      // Every existing component must be a real directory (not a link the agent made, which
      // the host would follow out of the sandbox); missing ones are created.
      let cur = host;
      for (const [i, part] of parts.entries()) {
        cur = join(cur, part);
        const last = i === parts.length - 1;
        const st = await lstat(cur).catch(() => undefined);
        if (st?.isSymbolicLink()) return undefined;
        if (!st) {
          if (last || !create) continue;
          await mkdir(cur);
          await lchown(cur, this.user.uid, this.user.gid).catch(() => {});
        } else if (!last && !st.isDirectory()) {
          return undefined;
        }
      }
      return cur;
    }
    return undefined;
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
      const removal = async () => {
        await removeContainer(this.container);
        await rm(this.hostRoot, { recursive: true, force: true });
      };
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

function containerName(spec: SandboxSpec): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 60);
  return `clawgym-${clean(spec.runId)}-${clean(spec.rolloutId)}-${randomBytes(3).toString('hex')}`;
}

/** Docker containers as sandboxes: one per rollout, no network but the model socket, non-root, limits. */
export class DockerSandboxProvider implements SandboxProvider {
  readonly name = 'docker';
  /** Tasks with their own image (Harbor's environment/Dockerfile) run in it. */
  readonly supportsEnvironments = true;
  readonly docker: Docker;
  readonly image: string;
  readonly socketPath: string;
  private readonly user: { uid: number; gid: number };
  private readonly tmpDir: string;
  private readonly taskImages: TaskImages;
  private readonly pools = new Map<string, WarmPool<Started>>();
  private readonly removals = new Set<Promise<void>>();

  constructor(private readonly options: DockerSandboxOptions = {}) {
    this.socketPath = options.socketPath ?? dockerSocketPath();
    this.docker = new Docker({ socketPath: this.socketPath });
    this.image = options.image ?? DEFAULT_IMAGE;
    this.user = parseUser(options.user ?? '1000:1000');
    this.tmpDir = options.tmpDir ?? tmpdir();
    this.taskImages = new TaskImages(this.docker, WORKSPACE);
  }

  async describeIsolation(): Promise<string> {
    let engine = 'unreachable';
    try {
      const v = await this.docker.version();
      engine = `engine ${v.Version}`;
    } catch (err) {
      engine = `daemon unreachable: ${(err as Error).message}`;
    }
    return `docker (${engine}): a container per sandbox from ${this.image}, no network but the model socket (NetworkMode none), `
      + `user ${this.user.uid}:${this.user.gid}, all capabilities dropped, no-new-privileges, read-only root, cpu/memory/pids limits`;
  }

  async create(spec: SandboxSpec): Promise<Sandbox> {
    const socketPath = spec.modelEndpoint.socketPath;
    if (!socketPath) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'the docker sandbox reaches the model through a Unix socket: spec.modelEndpoint.socketPath is required', { hint: 'listen on one with ServingProxy.listenUnix and pass its path' });
    const sock = await stat(socketPath).catch(() => undefined);
    if (!sock?.isSocket()) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `${socketPath} is not a Unix socket (the proxy's listenUnix)`);
    // Connecting needs write permission on the socket; the container user is not its owner.
    if (sock.uid !== this.user.uid && (sock.mode & 0o006) !== 0o006) await chmod(socketPath, (sock.mode & 0o777) | 0o006);
    // A task with its own image: built (once per content hash) before anything else is made.
    const taskImage: TaskImage | undefined = spec.environment
      ? await this.taskImages.prepare(spec.environment, { runId: spec.runId, logDir: spec.logDir, labels: { [LABEL_RUN]: spec.runId, [LABEL_ROLLOUT]: spec.rolloutId } })
      : undefined;
    const started = await this.poolFor(spec, socketPath, taskImage).take();
    try {
      // The marker now names the rollout the container serves (sweep and gc read it).
      await writeFile(join(started.root, MARKER), JSON.stringify({ runId: spec.runId, rolloutId: spec.rolloutId, pid: process.pid }));
    } catch (err) {
      await this.dispose(started);
      throw err;
    }
    return new DockerSandbox(this.docker, started.container, spec, started.root, this.user, started.workdir, started.path, (r) => this.track(r));
  }

  /** The warm pool of containers made the way `spec` needs (what is fixed when a container is created). */
  private poolFor(spec: SandboxSpec, socketPath: string, taskImage: TaskImage | undefined): WarmPool<Started> {
    const { cpus, memoryMb, pids } = spec.limits;
    const key = JSON.stringify([spec.runId, socketPath, taskImage?.tag ?? this.image, cpus, memoryMb, pids, [...new Set(spec.readOnlyPaths ?? [])].sort()]);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new WarmPool<Started>({
        make: () => this.start(spec, socketPath, taskImage),
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
    await removeContainer(s.container).catch(() => undefined);
    await rm(s.root, { recursive: true, force: true });
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
  }

  /** Create and start one container for sandboxes like `spec` (not yet handed out). */
  private async start(spec: SandboxSpec, socketPath: string, taskImage: TaskImage | undefined): Promise<Started> {
    const files = netnsRunFiles();
    const workdir = taskImage?.workdir ?? WORKSPACE;
    const root = await mkdtemp(join(this.tmpDir, `${DIR_PREFIX}${spec.runId.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 40)}-`));
    try {
      const owner = ownerStamp();
      await writeFile(join(root, MARKER), JSON.stringify({ runId: spec.runId, ...owner }));
      const workspace = join(root, 'workspace');
      const home = join(root, 'home');
      const opt = join(root, 'opt');
      await mkdir(workspace);
      await mkdir(join(home, 'tmp'), { recursive: true });
      await mkdir(opt);
      for (const f of files) await copyFile(f, join(opt, basename(f)));
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
        container = await this.docker.createContainer({
          name: containerName(spec),
          Image: taskImage?.tag ?? this.image,
          Cmd: FORWARDER_CMD,
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
            Mounts: [
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
        if (statusOf(err) === 404) throw new ClawGymError(ErrorCodes.SANDBOX_IMAGE_MISSING, `image ${taskImage?.tag ?? this.image} not found`, { hint: `build it with DOCKER_HOST=unix://${this.socketPath} scripts/docker-image.sh` });
        throw err;
      }
      try {
        await container.start();
      } catch (err) {
        await removeContainer(container).catch(() => {});
        throw err;
      }
      return { container, root, workdir, path: taskImage?.path };
    } catch (err) {
      await rm(root, { recursive: true, force: true });
      throw err;
    }
  }

  async sweep(runId?: string): Promise<SweepReport> {
    await this.settled(); // this process's own removals are not leftovers
    const removed: string[] = [];
    const containers = await this.docker.listContainers({ all: true, filters: { label: [runId === undefined ? LABEL_RUN : `${LABEL_RUN}=${runId}`] } });
    for (const c of containers) {
      // Only what a dead runner left: a live run's containers are in use (gc beside a running run).
      if (ownerAlive(parseOwner(c.Labels[LABEL_OWNER]))) continue;
      await removeContainer(this.docker.getContainer(c.Id));
      removed.push(`container ${c.Names[0]?.replace(/^\//, '') ?? c.Id}`);
      const root = c.Labels[LABEL_ROOT];
      if (root && basename(root).startsWith(DIR_PREFIX) && existsSync(root)) {
        await rm(root, { recursive: true, force: true });
        removed.push(`dir ${root}`);
      }
    }
    // Folders of sandboxes whose container was never created or is already gone.
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      if (!name.startsWith(DIR_PREFIX)) continue;
      const dir = join(this.tmpDir, name);
      let marker: { runId?: string } & Partial<OwnerStamp>;
      try { marker = JSON.parse(readFileSync(join(dir, MARKER), 'utf8')); } catch { continue; }
      if (runId !== undefined && marker.runId !== runId) continue;
      if (ownerAlive(marker)) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(`dir ${dir}`);
    }
    return { removed };
  }
}

/** The owner label of a container; one without it (made before owners were labelled) has no live owner. */
function parseOwner(label: string | undefined): Partial<OwnerStamp> {
  try { return label ? JSON.parse(label) as Partial<OwnerStamp> : {}; } catch { return {}; }
}

/** A `docker` sandbox provider. */
export function dockerSandboxProvider(options: DockerSandboxOptions = {}): DockerSandboxProvider {
  return new DockerSandboxProvider(options);
}
