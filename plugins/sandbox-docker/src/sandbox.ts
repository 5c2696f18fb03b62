import { constants, existsSync } from 'node:fs';
import { cp, lchown, mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { PassThrough } from 'node:stream';
import { ClawGymError, ErrorCodes, EXEC_OUTPUT_LIMIT_BYTES, execOutput, killGroup, messageOf, namespacePid, removeTree, SandboxPaths, stopWhen, type ExecOptions, type ExecResult, type Sandbox, type SandboxSpec, type SandboxUsage } from '@clawgym/core';
import Docker from 'dockerode';
import { DockerHost, isUnreachable } from './hosts';
import { hostTar, pullDir, pushDir } from './remote-workspace';
import { ModelTunnel } from './tunnel';
import { SANDBOX_PROXY_PORT, WORKSPACE, HOME, FORWARDER_CMD } from './layout';
import { statusOf, sleep, chownTree, removeContainer } from './containers';

/** A started container and its host folder, not yet handed out. */
export interface Started {
  container: Docker.Container;
  root: string;
  workdir: string;
  path?: string;
  /** The model tunnel of a container on a host that cannot see the proxy's socket. */
  tunnel?: ModelTunnel;
}

export interface RawExec {
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
export class DockerSandbox implements Sandbox {
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

  /**
   * The CPU seconds of everything the container ran so far, from the engine's one-shot stats
   * (its cgroup's usage), for the run's cost accounting.
   */
  async usage(): Promise<SandboxUsage> {
    const stats = await this.engine(() => this.container.stats({ stream: false })) as { cpu_stats?: { cpu_usage?: { total_usage?: number } } };
    const ns = stats.cpu_stats?.cpu_usage?.total_usage;
    return typeof ns === 'number' ? { cpuSeconds: ns / 1e9, source: 'docker stats' } : {};
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
