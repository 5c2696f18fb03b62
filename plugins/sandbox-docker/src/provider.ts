import { chmod, copyFile, mkdir, mkdtemp, open, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { checkWorkspacePath, ClawGymError, ErrorCodes, messageOf, mountDisk, ownerStamp, parseDiskLimit, probeDiskMount, removeTree, sizeInWords, writeOwnerFile, type LimitEnforcement, type ProviderCheck, type Sandbox, type SandboxIdentity, type SandboxProvider, type SandboxSpec, type SweepReport } from '@clawgym/core';
import Docker from 'dockerode';
import { DockerHost, DockerHosts, handshakeRefusal, isUnreachable, withTimeout, type DockerHostSpec } from './hosts';
import { engineLimitEnforcement } from './limits';
import { hostTar } from './remote-workspace';
import { TaskImages, type TaskImage } from './task-image';
import { ModelTunnel } from './tunnel';
import { WarmPool } from './warm-pool';
import { DEFAULT_IMAGE, SANDBOX_PROXY_PORT, WORKSPACE, HOME, ROOT_HOME, underRootHome, PROXY_SOCKET, FORWARDER_CMD, IDLE_CMD, LABEL_RUN, LABEL_ROLLOUT, LABEL_ROOT, LABEL_OWNER, DIR_PREFIX, MARKER } from './layout';
import { parseUser, netnsRunFiles, statusOf, chownTree, forwarderListening, removeContainer, readOnlyFolders, containerName } from './containers';
import { ReadOnlyVolumes } from './read-only-volumes';
import { DockerSandbox, type Started } from './sandbox';
import { sweepFolders, sweepHost } from './sweep';

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
  /**
   * What one sandbox may write (default `'1g'`; a number is MiB; false or 0: no limit): /tmp and
   * /var/tmp are tmpfs of that size each, and — on a local engine, as root — the workspace and
   * HOME share a tmpfs of that size (as the local sandbox's; core's disk.ts). Past it: ENOSPC.
   */
  diskLimit?: string | number | false;
}

/** The Docker API socket from `DOCKER_HOST` (unix:// only) or the default. */
export function dockerSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return host.slice('unix://'.length);
  if (host) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `DOCKER_HOST=${host} is not a unix:// socket`, { hint: `for a remote engine give it in the options: sandbox: { use: 'docker', options: { hosts: ['${host}'] } }` });
  return '/var/run/docker.sock';
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
  /** The run's read-only folders as volumes on remote hosts. */
  private readonly readOnly: ReadOnlyVolumes;
  private readonly diskBytes: number | undefined;
  private diskMount?: Promise<{ ok: boolean; reason?: string }>;

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
    this.readOnly = new ReadOnlyVolumes(this.image);
    this.user = parseUser(options.user ?? '1000:1000');
    this.tmpDir = options.tmpDir ?? tmpdir();
    this.diskBytes = parseDiskLimit(options.diskLimit);
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

  /**
   * The image by content for the run lock: its id (sha256 of its configuration, which names
   * every layer), on the first host. An image rebuilt differently under the same tag has another.
   */
  async identity(): Promise<SandboxIdentity> {
    const info = await withTimeout(this.docker.getImage(this.image).inspect(), 10_000, `image inspect ${this.image}`);
    return { kind: 'image', ref: this.image, digest: info.Id };
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
  async limitEnforcement(): Promise<LimitEnforcement> {
    const e = await engineLimitEnforcement(this.docker);
    if (this.diskBytes === undefined) return { ...e, disk: 'not enforced: diskLimit is off' };
    const size = sizeInWords(this.diskBytes);
    const mount = await (this.diskMount ??= probeDiskMount());
    return { ...e, disk: `tmpfs of ${size} for /tmp and for /var/tmp; workspace and HOME ${mount.ok ? `(local engine) a tmpfs of ${size}` : `not enforced: ${mount.reason}`}` };
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
        await writeOwnerFile(join(started.root, MARKER), { runId: spec.runId, rolloutId: spec.rolloutId, ...(spec.project ? { project: spec.project } : {}) });
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
    await this.readOnly.removeAll();
    this.hosts.close();
  }

  /** Create and start one container for sandboxes like `spec` (not yet handed out). */
  private async start(host: DockerHost, spec: SandboxSpec, socketPath: string, taskImage: TaskImage | undefined): Promise<Started> {
    const files = host.local ? netnsRunFiles() : [];
    const workdir = spec.workspacePath ?? taskImage?.workdir ?? WORKSPACE;
    const root = await mkdtemp(join(this.tmpDir, `${DIR_PREFIX}${spec.runId.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 40)}-`));
    try {
      // The project rides in the owner stamp (containers' and volumes' labels, the folder's marker): gc of one project leaves another's alone.
      const owner = { ...ownerStamp(), ...(spec.project ? { project: spec.project } : {}) };
      await writeOwnerFile(join(root, MARKER), { runId: spec.runId }, owner);
      const workspace = join(root, 'workspace');
      const home = join(root, 'home');
      const opt = join(root, 'opt');
      // On a local engine (it binds our folders), as root: the workspace and HOME on a tmpfs of the disk limit.
      const disk = this.diskBytes !== undefined && host.local && (await (this.diskMount ??= probeDiskMount())).ok;
      if (disk) await mountDisk(root, this.diskBytes!);
      else {
        await mkdir(workspace);
        await mkdir(join(home, 'tmp'), { recursive: true });
      }
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
          ...await this.readOnly.mounts(host, spec.runId, owner, await readOnlyFolders(readOnly)),
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
            Tmpfs: Object.fromEntries(['/tmp', '/var/tmp'].map((p) => [p, `rw,nosuid,nodev,mode=1777${this.diskBytes !== undefined ? `,size=${this.diskBytes}` : ''}`])),
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

  async sweep(runId?: string, scope?: { project?: string }): Promise<SweepReport> {
    await this.settled(); // this process's own removals are not leftovers
    const removed: string[] = [];
    for (const host of this.hosts.list) await sweepHost(host, runId, removed, this.hosts.list.length > 1, scope?.project);
    await sweepFolders(this.tmpDir, runId, removed, scope?.project);
    return { removed };
  }
}

/** A `docker` sandbox provider. */
export function dockerSandboxProvider(options: DockerSandboxOptions = {}): DockerSandboxProvider {
  return new DockerSandboxProvider(options);
}
