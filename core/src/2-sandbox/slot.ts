/**
 * What a local sandbox is before it runs anything — its folder with `owner.json`, workspace and
 * HOME, its cgroups and, for bubblewrap as root, its holder — and the warm pool of such slots:
 * a holder takes about as long to start as a bare bubblewrap, so a few are started ahead for the
 * next sandboxes of the same shape (run, model socket, read-only paths, limited controllers).
 * A slot is handed out once, renamed to its sandbox's folder, given its limits, and never
 * reused: a destroyed sandbox's holder is killed and its folder removed, as without a pool.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rmdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { SandboxSpec } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';
import { DISK_FOLDER, diskMoved, mountDisk } from './disk';
import { accountingCgroup, controllersFor, makeCgroups, removeCgroup, writeLimits, type Controller } from './cgroups';
import { SANDBOX_PROXY_PORT } from './forwarder';
import { Holder } from './holder';
import { NETNS_RUN, type Machine } from './machine';
import { startTimeOf } from './owner';
import { removeSandbox, removeTree, type OwnerFile } from './sweep';

/** The workspace as processes in a bubblewrap sandbox see it. */
export const SANDBOX_WORKSPACE = '/workspace';
/** HOME as processes in a bubblewrap sandbox see it (TMPDIR is `<HOME>/tmp`). */
export const SANDBOX_HOME = '/home/agent';
/** Where the proxy's Unix socket is bound inside a bubblewrap sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/clawgym/proxy.sock';
/** Process (task) limit when the spec sets none. Threads count too: one Node.js process is ~10. */
export const DEFAULT_PIDS_LIMIT = 1024;

/** Folder names of pooled slots (a sandbox's folder is named after its rollout id, which cannot start with a dot). */
const POOLED_PREFIX = '.pooled-';
/** An idle pooled slot is dropped after this long (a run that stopped creating sandboxes keeps none). */
const IDLE_MS = 30_000;

/** Where a destroyed sandbox's removal (cgroups, folder) finishes off the rollout's path. */
export type Background = (removal: Promise<unknown>) => void;

/** What a slot is made for: everything of a spec that is fixed once its holder runs. */
export interface SlotShape {
  runId: string;
  project?: string;
  /** Where the workspace is bound inside (the spec's `workspacePath`, else {@link SANDBOX_WORKSPACE}). */
  workspacePath: string;
  socketPath?: string;
  readOnlyPaths: string[];
  controllers: Controller[];
}

/** A sandbox's folder, cgroups and holder (see the file comment). */
export interface Slot {
  dir: string;
  workspace: string;
  home: string;
  /** /tmp of the sandbox on the host, where its disk is limited (bound over bubblewrap's /tmp). */
  tmp?: string;
  /** Whether its workspace, HOME and /tmp lie on its own size-limited tmpfs (disk.ts). */
  disk: boolean;
  cgName: string;
  cgroups: string[];
  owner: OwnerFile;
  holder?: Holder;
}

export function shapeOf(spec: SandboxSpec): SlotShape {
  return {
    runId: spec.runId, ...(spec.project ? { project: spec.project } : {}), workspacePath: spec.workspacePath ?? SANDBOX_WORKSPACE, socketPath: spec.modelEndpoint.socketPath,
    readOnlyPaths: spec.readOnlyPaths ?? [], controllers: controllersFor(spec.limits),
  };
}

const keyOf = (s: SlotShape) => JSON.stringify([s.runId, s.workspacePath, s.socketPath, s.readOnlyPaths, s.controllers]);

/** PATH inside: the standard folders, and Node's own when it is elsewhere. */
export function sandboxPath(): string {
  const nodeDir = dirname(process.execPath);
  const stdPath = '/usr/local/bin:/usr/bin:/bin';
  return stdPath.split(':').includes(nodeDir) ? stdPath : `${nodeDir}:${stdPath}`;
}

/** Where a slot in folder `dir` keeps what its sandbox writes: on its tmpfs (`disk`) or in the folder itself. */
function layout(dir: string, disk: boolean): Pick<Slot, 'workspace' | 'home' | 'tmp'> {
  return { workspace: join(dir, 'workspace'), home: join(dir, 'home'), ...(disk ? { tmp: join(dir, DISK_FOLDER, 'tmp') } : {}) };
}

/** bubblewrap up to `--`: the read-only system, the sandbox's folders, the model socket, every namespace unshared. */
export function bwrapArgs(m: Machine, slot: Pick<Slot, 'workspace' | 'home' | 'tmp'>, shape: SlotShape, cwd: string): string[] {
  const nodeDir = dirname(process.execPath);
  // The root is bubblewrap's own tmpfs: it makes the folders leading to a workspace path a task
  // asks for (/root/.openclaw/workspace) itself, open to the sandbox's user.
  const args = [m.bwrap!, ...m.systemArgs, '--bind', slot.workspace, shape.workspacePath, '--bind', slot.home, SANDBOX_HOME];
  // /tmp on the sandbox's limited disk; where that cannot be mounted, bubblewrap's own tmpfs of that size (0.5+).
  if (slot.tmp) args.push('--bind', slot.tmp, '/tmp');
  else if (m.disk.bytes !== undefined && sizeOption(m.bwrapVersion)) args.push('--size', String(m.disk.bytes), '--tmpfs', '/tmp');
  const ro = new Set([dirname(NETNS_RUN), ...(nodeDir.startsWith('/usr/') ? [] : [nodeDir]), ...shape.readOnlyPaths]);
  for (const p of ro) args.push('--ro-bind-try', p, p);
  args.push('--bind', shape.socketPath!, SANDBOX_PROXY_SOCKET, '--remount-ro', '/');
  args.push('--unshare-all', '--die-with-parent', '--new-session', '--hostname', 'clawgym');
  if (m.root) args.push('--cap-drop', 'ALL');
  args.push('--chdir', cwd);
  return args;
}

/** Whether this bubblewrap has `--size` (0.5.0 and later). */
function sizeOption(version = ''): boolean {
  const v = /(\d+)\.(\d+)/.exec(version);
  return v !== null && (Number(v[1]) > 0 || Number(v[2]) >= 5);
}

/**
 * Make a slot named `name` under `<root>/<runId>/`: folder, owner file, cgroups with `limits`,
 * and the holder when the machine uses one. Throws SANDBOX_SPEC_INVALID when the folder exists.
 */
export async function makeSlot(m: Machine, root: string, shape: SlotShape, name: string, limits: SandboxSpec['limits'] & { pids: number }): Promise<Slot> {
  const runDir = join(root, shape.runId);
  const dir = join(runDir, name);
  for (let attempt = 0; ; attempt++) {
    await mkdir(runDir, { recursive: true, mode: 0o755 });
    try { await mkdir(dir, { mode: 0o755 }); break; } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw exists(shape.runId, name, dir);
      if (code !== 'ENOENT' || attempt >= 3) throw e; // ENOENT: a sibling's destroy() removed the empty run folder meanwhile
    }
  }
  const disk = m.disk.mount && m.disk.bytes !== undefined;
  const { workspace, home, tmp } = layout(dir, disk);
  const cgName = `clawgym-${`${shape.runId}-${name}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80)}-${randomBytes(3).toString('hex')}`;
  // CPU accounting (cgroup v1's cpuacct): no limit, the sandbox's CPU seconds for the run's cost.
  const acct = accountingCgroup(m.cgroups, cgName);
  const owner: OwnerFile = {
    pid: process.pid, pidStart: startTimeOf(process.pid), host: hostname(), runId: shape.runId, ...(shape.project ? { project: shape.project } : {}), rolloutId: name,
    created: new Date().toISOString(), mode: m.mode,
    cgroups: [...shape.controllers.filter((c) => m.cgroups[c]).map((c) => join(m.cgroups[c]!.parent, cgName)), ...acct ? [acct] : []].filter((v, i, a) => a.indexOf(v) === i),
  };
  let cgroups: string[] = [];
  try {
    await writeFile(join(dir, 'owner.json'), JSON.stringify(owner, null, 2)); // before the cgroups exist: sweep finds them
    if (disk) {
      // The workspace, HOME and /tmp on the sandbox's limited disk, before bubblewrap starts.
      await mountDisk(dir, m.disk.bytes!);
    } else {
      await mkdir(workspace);
      await mkdir(join(home, 'tmp'), { recursive: true });
    }
    cgroups = await makeCgroups(m.cgroups, cgName, shape.controllers);
    if (acct && !cgroups.includes(acct)) {
      await mkdir(acct).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
      cgroups.push(acct);
    }
    await writeLimits(m.cgroups, cgName, limits);
  } catch (e) {
    for (const cg of owner.cgroups) await removeCgroup(cg);
    await removeTree(dir);
    throw e;
  }
  // The holder's environment is PATH and LANG: never a secret, and no sandbox marker either (a
  // pooled holder's folder is renamed; it dies with its pid 1, its cgroup, and its runner).
  const holder = m.mode === 'bubblewrap' && m.holder
    ? new Holder({ bwrap: bwrapArgs(m, { workspace, home, tmp }, shape, shape.workspacePath), env: { PATH: sandboxPath(), LANG: 'C.UTF-8' }, cgroups, port: SANDBOX_PROXY_PORT, socketInside: SANDBOX_PROXY_SOCKET })
    : undefined;
  return { dir, workspace, home, ...(tmp ? { tmp } : {}), disk, cgName, cgroups, owner, holder };
}

function exists(runId: string, rolloutId: string, dir: string): ClawGymError {
  return new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `sandbox ${runId}/${rolloutId} already exists (${dir})`, { hint: `destroy it, or sweep('${runId}') (clawgym gc)` });
}

/** Kill a slot's holder and remove the rest (for slots never handed out, and destroyed sandboxes). */
export async function discardSlot(slot: Slot): Promise<void> {
  await slot.holder?.kill();
  await removeSandbox(slot.dir, slot.cgroups);
  await rmdir(dirname(slot.dir)).catch(() => undefined); // the run's folder, only when empty
}

interface Pooled { slot: Promise<Slot | undefined>; idle: NodeJS.Timeout }

/** Warm slots per shape (see the file comment). */
export class SlotPool {
  private readonly idle = new Map<string, Pooled[]>();
  private closed = false;

  constructor(private readonly m: Machine, private readonly root: string, private readonly size: number, private readonly background: Background) {}

  /**
   * The slot for sandbox `rolloutId` with `limits`: a pooled one renamed and given its limits
   * when one of this shape is there (starting its replacement), a new one otherwise (then the
   * pool for this shape starts filling).
   */
  async take(shape: SlotShape, rolloutId: string, limits: SandboxSpec['limits'] & { pids: number }): Promise<Slot> {
    const key = keyOf(shape);
    const queue = this.idle.get(key) ?? [];
    let slot: Slot | undefined;
    while (!slot && queue.length) {
      const p = queue.shift()!;
      clearTimeout(p.idle);
      const s = await p.slot;
      // Renamed only once its holder is up: bubblewrap resolves the bind mounts' paths as it starts.
      const up = s && (await s.holder?.ready.then(() => true, () => false) ?? true);
      if (s && up && !s.holder?.gone()) slot = s;
      else if (s) this.background(discardSlot(s));
    }
    this.fill(shape);
    if (!slot) return makeSlot(this.m, this.root, shape, rolloutId, limits);
    const dir = join(this.root, shape.runId, rolloutId);
    try {
      // A folder that exists (a sandbox of that id) is not empty: rename refuses to replace it.
      await rename(slot.dir, dir);
      diskMoved(slot.dir, dir);
    } catch (e) {
      this.background(discardSlot(slot));
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') throw exists(shape.runId, rolloutId, dir);
      throw e;
    }
    const owner: OwnerFile = { ...slot.owner, rolloutId, created: new Date().toISOString() };
    const taken: Slot = { ...slot, dir, ...layout(dir, slot.disk), owner };
    try {
      await writeFile(join(dir, 'owner.json'), JSON.stringify(owner, null, 2));
      await writeLimits(this.m.cgroups, slot.cgName, limits);
    } catch (e) {
      this.background(discardSlot(taken));
      throw e;
    }
    return taken;
  }

  /** Start slots of `shape` until the pool holds its size. */
  private fill(shape: SlotShape): void {
    if (this.closed || this.size <= 0) return;
    const key = keyOf(shape);
    const queue = this.idle.get(key) ?? [];
    this.idle.set(key, queue);
    while (queue.length < this.size) {
      const name = `${POOLED_PREFIX}${randomBytes(6).toString('hex')}`;
      const slot = makeSlot(this.m, this.root, shape, name, { pids: DEFAULT_PIDS_LIMIT }).catch(() => undefined);
      const entry: Pooled = {
        slot,
        idle: setTimeout(() => {
          const i = queue.indexOf(entry);
          if (i >= 0) queue.splice(i, 1);
          this.background(slot.then((s) => s && discardSlot(s)));
        }, IDLE_MS),
      };
      entry.idle.unref();
      queue.push(entry);
    }
  }

  /** Drop every idle slot (their removal goes to the background). */
  close(): void {
    this.closed = true;
    for (const queue of this.idle.values()) {
      for (const p of queue.splice(0)) {
        clearTimeout(p.idle);
        this.background(p.slot.then((s) => s && discardSlot(s)));
      }
    }
  }
}
