/**
 * Starting processes from a small helper instead of the runner. Node forks to spawn, and a
 * fork's cost grows with the parent's memory: measured here, 7 ms per spawn from a 45 MB
 * process, 19 ms from 255 MB, 37 ms from 676 MB, all of it on the runner's (busy) thread. A
 * training runner holds the model, its engine and the proxy, so its spawns were ~20% of its CPU
 * time; the helper (spawner-child.ts) does them on the other core. Falls back to spawning here
 * when the helper cannot start or dies.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const CHILD = resolve(__dirname, '..', '..', 'dist', 'sandbox', 'spawner-child.js');

/** What a finished command gave. */
export interface Finished {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Bytes written, also past `maxBytes` (what is over is dropped). */
  outBytes: number;
  errBytes: number;
  /** Why it could not start, when it could not. */
  error?: string;
}

/** A started command: its pid once known, its result once its pipes closed. */
export interface Started {
  pid: Promise<number | undefined>;
  done: Promise<Finished>;
  /** Say it was killed: then strays holding its pipes delay the result by at most a second. */
  killed(): void;
}

export interface SpawnSpec {
  cmd: string[];
  env: Record<string, string>;
  cwd?: string;
  stdin: string;
  maxBytes: number;
}

interface Pending { pid: (p: number | undefined) => void; done: (f: Finished) => void }

let helper: ChildProcess | undefined;
let helperFailed = false;
let nextId = 0;
const pending = new Map<number, Pending>();

function startHelper(): ChildProcess | undefined {
  if (helper?.connected) return helper;
  if (helperFailed || !existsSync(CHILD)) return undefined;
  try {
    const child = fork(CHILD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json', execArgv: [] });
    child.on('message', (m: { type: 'pid' | 'close'; id: number; pid?: number } & Partial<Finished>) => {
      const p = pending.get(m.id);
      if (!p) return;
      if (m.type === 'pid') { p.pid(m.pid); return; }
      pending.delete(m.id);
      if (pending.size === 0) child.channel?.unref();
      p.done({ code: m.code ?? null, signal: m.signal ?? null, stdout: m.stdout ?? '', stderr: m.stderr ?? '', outBytes: m.outBytes ?? 0, errBytes: m.errBytes ?? 0, error: m.error });
    });
    const lost = () => {
      if (helper === child) helper = undefined;
      for (const [id, p] of pending) {
        pending.delete(id);
        p.pid(undefined);
        p.done({ code: 127, signal: null, stdout: '', stderr: '', outBytes: 0, errBytes: 0, error: 'the spawner helper process went away' });
      }
    };
    child.on('exit', lost);
    child.on('error', () => { helperFailed = true; lost(); });
    child.unref();
    child.channel?.unref();
    helper = child;
    return child;
  } catch {
    helperFailed = true;
    return undefined;
  }
}

/** Start the helper now (it takes a Node start-up), so the first command does not wait for it. */
export function warmSpawner(): void {
  startHelper();
}

/** Start `spec.cmd` in its own process group (detached), from the helper where it runs. */
export function startProcess(spec: SpawnSpec): Started {
  const h = startHelper();
  if (!h) return spawnHere(spec);
  const id = ++nextId;
  let setPid!: (p: number | undefined) => void;
  let setDone!: (f: Finished) => void;
  const pid = new Promise<number | undefined>((r) => { setPid = r; });
  const done = new Promise<Finished>((r) => { setDone = r; });
  pending.set(id, { pid: setPid, done: setDone });
  h.channel?.ref();
  h.send({ type: 'run', id, ...spec });
  return { pid, done, killed: () => { if (pending.has(id) && h.connected) h.send({ type: 'killed', id }); } };
}

/** The same, spawned by this process (no helper). */
export function spawnHere(spec: SpawnSpec): Started {
  let killed = false;
  let grace: NodeJS.Timeout | undefined;
  let child: ChildProcess | undefined;
  let onExited = () => undefined as void;
  const done = new Promise<Finished>((settle) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let finished = false;
    const finish = (code: number | null, signal: string | null, error?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(grace);
      settle({ code, signal, error, outBytes, errBytes, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    };
    try {
      child = spawn(spec.cmd[0]!, spec.cmd.slice(1), { env: spec.env, cwd: spec.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (e) {
      finish(127, null, (e as Error).message);
      return;
    }
    onExited = () => { grace ??= setTimeout(() => finish(child!.exitCode, child!.signalCode), 1000); };
    child.stdout!.on('data', (d: Buffer) => { outBytes += d.length; if (outBytes <= spec.maxBytes) out.push(d); });
    child.stderr!.on('data', (d: Buffer) => { errBytes += d.length; if (errBytes <= spec.maxBytes) err.push(d); });
    child.stdin!.on('error', () => undefined);
    child.on('error', (e) => finish(127, null, e.message));
    // A killed sandbox's strays may hold the pipes open: do not wait for them forever.
    child.on('exit', () => { if (killed) onExited(); });
    child.on('close', (code, signal) => finish(code, signal));
    child.stdin!.end(spec.stdin);
  });
  return {
    pid: Promise.resolve(child?.pid),
    done,
    killed: () => { killed = true; if (child && (child.exitCode !== null || child.signalCode !== null)) onExited(); },
  };
}
