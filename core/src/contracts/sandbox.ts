/** Resource limits of one sandbox. Unset means the provider's default. */
export interface SandboxLimits {
  /** CPU share, in cores. */
  cpus?: number;
  memoryMb?: number;
  /** Maximum number of processes. */
  pids?: number;
  /** Wall-clock limit of the whole sandbox, after which everything in it is killed. */
  wallMs?: number;
}

/**
 * The container image a task's rollouts must run in (a Harbor task's `environment/Dockerfile`).
 * Only providers that build or run images can honour it ({@link SandboxProvider.supportsEnvironments});
 * the runner refuses such a task on any other provider before the first rollout.
 */
export interface TaskEnvironment {
  /** Host folder that is the build context (Harbor: `environment/`). */
  contextDir: string;
  /** The Dockerfile, relative to `contextDir` (default `Dockerfile`). */
  dockerfile?: string;
  /** Content hash of the build context: the image is built once per hash and reused. */
  hash: string;
  /** A prebuilt image to run instead of building one (Harbor's `docker_image`). */
  image?: string;
  /** Longest a build may take (Harbor's `build_timeout_sec`). */
  buildTimeoutMs?: number;
  /** Where the task came from, for messages (e.g. its task.toml). */
  source: string;
}

/** What to create. */
export interface SandboxSpec {
  runId: string;
  /**
   * The project folder of the run (its config's folder): recorded with the sandbox, so that a
   * sweep of one project's leftovers leaves another project's (same run name) alone.
   */
  project?: string;
  rolloutId: string;
  limits: SandboxLimits;
  /**
   * The model endpoint of this rollout's proxy session, as the host sees it. The provider
   * makes it reachable from inside (and nothing else).
   */
  modelEndpoint: { socketPath?: string; url: string };
  /** Extra environment for processes in the sandbox. */
  env?: Record<string, string>;
  /**
   * Absolute host paths (files or folders) that processes inside must be able to read and
   * run, e.g. a harness CLI installed outside the system folders (`.harnesses/...`,
   * `node_modules`). Providers with a filesystem boundary bind each one read-only at the same
   * path; a path that does not exist is skipped. The system folders (`/usr`, `/etc`) and the
   * Node.js binary are always available and need not be listed.
   */
  readOnlyPaths?: string[];
  /** The task's own image, when it has one: only providers with `supportsEnvironments` accept it. */
  environment?: TaskEnvironment;
  /** A folder of the run where the provider may keep logs of what it did (image build logs). */
  logDir?: string;
  /**
   * Where processes inside see the workspace, when the task asks for a path of its own
   * (ClawGym-Task's `/root/.openclaw/workspace`, a Harbor image's `/app`): absolute and
   * normalised (see `checkWorkspacePath`). It is also the default working folder of commands.
   * Providers with a filesystem boundary (bubblewrap, Docker) bind the workspace there; a
   * provider that cannot place a folder at an arbitrary path refuses the spec with
   * SANDBOX_UNSUPPORTED rather than putting it elsewhere. Unset: the provider's own path.
   */
  workspacePath?: string;
}

/**
 * The most of each output stream (stdout, stderr) an exec keeps, in bytes: a command that writes
 * more (a harness catting a huge log) has the rest dropped and {@link EXEC_OUTPUT_TRUNCATED}
 * appended, so a runaway command cannot fill the runner's memory. Every provider holds to it.
 */
export const EXEC_OUTPUT_LIMIT_BYTES = 16 * 1024 * 1024;
/** What ends a stream cut at {@link EXEC_OUTPUT_LIMIT_BYTES}. */
export const EXEC_OUTPUT_TRUNCATED = '\n[clawgym: output truncated]\n';

/** An output stream as an {@link ExecResult} holds it: what was kept, marked when `written` went past the limit. */
export const execOutput = (kept: string | Buffer, written: number): string =>
  kept.toString() + (written > EXEC_OUTPUT_LIMIT_BYTES ? EXEC_OUTPUT_TRUNCATED : '');

/** Result of a finished process. */
export interface ExecResult {
  exitCode: number | null;
  signal: string | null;
  /** At most {@link EXEC_OUTPUT_LIMIT_BYTES} of it, then {@link EXEC_OUTPUT_TRUNCATED}. */
  stdout: string;
  /** As `stdout`. */
  stderr: string;
  timedOut: boolean;
}

export interface ExecOptions {
  /** Working directory inside the sandbox (default: the workspace). */
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Start the in-sandbox TCP forwarder that makes `modelBaseUrl` reachable (default true). A
   * process that talks to `modelSocketPath` itself passes false and saves a process start
   * where a provider starts one per command (a sandbox whose forwarder lives as long as it does,
   * as the local sandbox's holder, ignores it).
   */
  modelForwarder?: boolean;
}

/**
 * A temporary, isolated place where one rollout runs: a writable workspace, its own HOME
 * and TMPDIR, no network except its model endpoint.
 */
export interface Sandbox {
  readonly id: string;
  /** Host path of the workspace (for setup and verification, which run outside). */
  readonly workspaceHostPath: string;
  /** The workspace path as processes inside see it. */
  readonly workspacePath: string;
  /** HOME as processes inside see it. */
  readonly homePath: string;
  /** The model endpoint's base URL as seen from inside the sandbox. */
  readonly modelBaseUrl: string;
  /**
   * Where the provider has one: a Unix socket inside the sandbox that reaches the same endpoint
   * (HTTP with `modelBaseUrl`'s path), for processes that can speak HTTP over a socket.
   */
  readonly modelSocketPath?: string;
  exec(argv: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Write a file inside the sandbox (harness configs, scripts). */
  writeFile(sandboxPath: string, data: string | Buffer): Promise<void>;
  /** Copy a host file or folder into the sandbox. */
  copyIn(hostPath: string, sandboxPath: string): Promise<void>;
  /** Copy a sandbox file or folder out to the host. */
  copyOut(sandboxPath: string, hostPath: string): Promise<void>;
  /**
   * Bring the workspace's current state to {@link workspaceHostPath}, where the host-side
   * verifier reads it. Providers whose workspace is that folder (bind-mounted) need none; a
   * sandbox on a machine that cannot see our filesystem (a remote Docker host) copies it back.
   * The runner calls it after the harness, before the verifier.
   */
  sync?(): Promise<void>;
  /**
   * What the sandbox's processes used so far, where the provider can measure it (a cgroup's CPU
   * time): the run's cost accounting reads it after verification, before `destroy`.
   */
  usage?(): Promise<SandboxUsage>;
  /**
   * Stop everything inside (nothing runs or writes once it resolves) and remove every trace.
   * A provider may finish the removal in the background (Docker: the container is frozen, then
   * removed); its `close()` waits for that. Idempotent.
   */
  destroy(): Promise<void>;
}

/** What a sandbox's processes used (see {@link Sandbox.usage}); a figure it cannot measure is absent. */
export interface SandboxUsage {
  /** CPU seconds, user and system, of every process the sandbox ran. */
  cpuSeconds?: number;
  /** Where the figure comes from, e.g. `cgroup v2 cpu.stat`. */
  source?: string;
}

/** Report of a sweep of leftovers from killed runs. */
export interface SweepReport {
  removed: string[];
}

/** Creates sandboxes; registered by sandbox plugins (`local`, `docker`, ...). */
/** What a sandbox provider's sandboxes run on, by content (see {@link SandboxProvider.identity}). */
export interface SandboxIdentity {
  /** `image`: a container image; `rootfs`: a root filesystem folder; `host`: this machine's own system. */
  kind: 'image' | 'rootfs' | 'host';
  /** The image's name, the folder, or a description of the host. */
  ref: string;
  /** The image's id (sha256:…), or a sha256 over the folder's files. */
  digest: string;
}

export interface SandboxProvider {
  readonly name: string;
  /** True when `create` runs a spec's {@link SandboxSpec.environment} (builds or pulls its image). */
  readonly supportsEnvironments?: boolean;
  /** One line on the isolation it gives here, e.g. "bubblewrap: all namespaces unshared". */
  describeIsolation(): Promise<string>;
  create(spec: SandboxSpec): Promise<Sandbox>;
  /** Can it isolate here, and if not, what installs what it needs (`clawgym doctor`). */
  check?(): Promise<import('./check').ProviderCheck>;
  /**
   * Where its commands find their programs, when not this machine's own /usr and PATH (a
   * container image, another root filesystem), e.g. `image clawgym-openclaw:1`: `clawgym doctor`
   * then checks harness CLIs inside one of its sandboxes instead of on this machine.
   */
  systemOf?(): string | undefined;
  /**
   * What its sandboxes run on, by content, for the run lock (`clawgym lock`): an image's digest,
   * a root filesystem's hash, or this machine's system. Two images built differently under one
   * tag differ here. Default: unknown (the lock records only the provider's name).
   */
  identity?(): Promise<SandboxIdentity>;
  /**
   * Remove leftovers (processes, mounts, containers, temp dirs) labelled with `runId`, or all;
   * with `scope.project`, only those of that project.
   */
  sweep(runId?: string, scope?: { project?: string }): Promise<SweepReport>;
  /**
   * Release what the provider keeps between sandboxes (Docker's warm pool of started
   * containers). Safe at any time: later `create` calls start afresh. Called when a run,
   * an evaluation or an sft command ends.
   */
  close?(): Promise<void>;
}
