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
import type { Socket } from 'node:net';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { spawnHere, type Finished, type SpawnSpec, type Started } from './collect';

export { spawnHere, type Finished, type SpawnSpec, type Started } from './collect';

const CHILD = resolve(__dirname, '..', '..', 'dist', '2-sandbox', 'spawner-child.js');

interface Pending {
  unref: boolean;
  pid: (p: number | undefined) => void;
  ready: (s: string | undefined) => void;
  done: (f: Finished) => void;
  /** A channel's stdin or stdout, passed over from the helper. */
  handle?: (which: 'stdin' | 'stdout', socket: Socket | undefined) => void;
}

let helper: ChildProcess | undefined;
let helperFailed = false;
let nextId = 0;
const pending = new Map<number, Pending>();

function startHelper(): ChildProcess | undefined {
  if (helper?.connected) return helper;
  if (helperFailed || !existsSync(CHILD)) return undefined;
  try {
    const child = fork(CHILD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json', execArgv: [] });
    child.on('message', (m: { type: 'pid' | 'ready' | 'stdin' | 'stdout' | 'close'; id: number; pid?: number; text?: string } & Partial<Finished>, socket?: Socket) => {
      const p = pending.get(m.id);
      if (!p) return;
      if (m.type === 'pid') { p.pid(m.pid); return; }
      if (m.type === 'stdin' || m.type === 'stdout') { p.handle?.(m.type, socket); return; }
      if (m.type === 'ready') { p.ready(m.text); return; }
      pending.delete(m.id);
      p.ready(undefined);
      if (![...pending.values()].some((q) => !q.unref)) child.channel?.unref();
      p.done({ code: m.code ?? null, signal: m.signal ?? null, stdout: m.stdout ?? '', stderr: m.stderr ?? '', outBytes: m.outBytes ?? 0, errBytes: m.errBytes ?? 0, error: m.error });
    });
    const lost = () => {
      if (helper === child) helper = undefined;
      for (const [id, p] of pending) {
        pending.delete(id);
        p.pid(undefined);
        p.ready(undefined);
        p.handle?.('stdin', undefined);
        p.handle?.('stdout', undefined);
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

/**
 * Stop the helper and wait until it has exited (it waits for what it started first), so that
 * this process reaps it: a helper left to exit after its runner is a zombie for init to reap.
 * The CLI calls it before it exits; a later command starts a new helper.
 */
export async function stopSpawner(waitMs = 5000): Promise<void> {
  const h = helper;
  if (!h) return;
  helper = undefined;
  if (h.exitCode !== null || h.signalCode !== null) return;
  h.ref(); // the 'exit' event must come before this process may end
  const exited = new Promise<void>((r) => h.once('exit', () => r()));
  if (h.connected) h.disconnect(); else h.kill('SIGKILL');
  let t: NodeJS.Timeout | undefined;
  const late = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => { t = setTimeout(() => r(true), waitMs); })]);
  clearTimeout(t);
  if (late) { h.kill('SIGKILL'); await exited; }
}

/** Start `spec.cmd` in its own process group (detached), from the helper where it runs. */
export function startProcess(spec: SpawnSpec): Started {
  const h = startHelper();
  if (!h) return spawnHere(spec);
  const id = ++nextId;
  let setPid!: (p: number | undefined) => void;
  let setReady!: (s: string | undefined) => void;
  let setDone!: (f: Finished) => void;
  const pid = new Promise<number | undefined>((r) => { setPid = r; });
  const ready = new Promise<string | undefined>((r) => { setReady = r; });
  const done = new Promise<Finished>((r) => { setDone = r; });
  pending.set(id, { unref: spec.unref === true, pid: setPid, ready: setReady, done: setDone });
  if (!spec.unref) h.channel?.ref();
  h.send({ type: 'run', id, ...spec });
  return { pid, done, ready, killed: () => { if (pending.has(id) && h.connected) h.send({ type: 'killed', id }); } };
}

/** A long-lived process whose stdin and stdout are a command channel (the local sandbox's holder). */
export interface Channel {
  pid: Promise<number | undefined>;
  stdin: Promise<Writable | undefined>;
  stdout: Promise<Readable | undefined>;
  /** How it ended; `stderr` holds the start of what it wrote there. */
  done: Promise<Finished>;
}

/**
 * Start `cmd` in its own process group with its stdin and stdout as a channel to this process:
 * from the helper where it runs (its pipes are then passed over; this process never forks),
 * here otherwise. It does not keep this process alive.
 */
export function startChannel(spec: { cmd: string[]; env: Record<string, string> }): Channel {
  const h = startHelper();
  if (!h) return channelHere(spec);
  const id = ++nextId;
  let setPid!: (p: number | undefined) => void;
  let setDone!: (f: Finished) => void;
  const sockets: Partial<Record<'stdin' | 'stdout', (s: Socket | undefined) => void>> = {};
  const pid = new Promise<number | undefined>((r) => { setPid = r; });
  const stdin = new Promise<Socket | undefined>((r) => { sockets.stdin = r; });
  const stdout = new Promise<Socket | undefined>((r) => { sockets.stdout = r; });
  const done = new Promise<Finished>((r) => { setDone = r; });
  pending.set(id, {
    unref: true, pid: setPid, ready: () => undefined, done: setDone,
    handle: (which, socket) => { socket?.unref(); sockets[which]?.(socket); },
  });
  h.send({ type: 'channel', id, cmd: spec.cmd, env: spec.env });
  return { pid, stdin, stdout, done };
}

/** {@link startChannel} in this process. */
export function channelHere(spec: { cmd: string[]; env: Record<string, string> }): Channel {
  let child: ChildProcess;
  try {
    child = spawn(spec.cmd[0]!, spec.cmd.slice(1), { env: spec.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  } catch (e) {
    const f: Finished = { code: 127, signal: null, stdout: '', stderr: '', outBytes: 0, errBytes: 0, error: (e as Error).message };
    return { pid: Promise.resolve(undefined), stdin: Promise.resolve(undefined), stdout: Promise.resolve(undefined), done: Promise.resolve(f) };
  }
  child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as Socket | null)?.unref?.();
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { if (stderr.length < 4096) stderr += d.toString('utf8'); });
  const done = new Promise<Finished>((resolve) => {
    child.on('error', (e) => resolve({ code: 127, signal: null, stdout: '', stderr, outBytes: 0, errBytes: 0, error: e.message }));
    // 'exit', then its stderr's end: 'close' would also wait for the pipes handed to the runner.
    const ended = new Promise<void>((r) => child.stderr!.on('close', () => r()));
    child.on('exit', (code, signal) => { void ended.then(() => resolve({ code, signal, stdout: '', stderr, outBytes: 0, errBytes: stderr.length })); });
  });
  return { pid: Promise.resolve(child.pid), stdin: Promise.resolve(child.stdin!), stdout: Promise.resolve(child.stdout!), done };
}
