/**
 * Spawn and collect: start a command in its own process group, feed it stdin, keep its output
 * up to a bound, and give back how it ended. The one implementation behind every sandbox's
 * commands (through the spawner helper or in this process), the machine probes and the Docker
 * sandbox's host-side `tar`.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** What to start. */
export interface SpawnSpec {
  cmd: string[];
  env: Record<string, string>;
  cwd?: string;
  stdin: string;
  maxBytes: number;
  /** Resolve {@link Started.ready} with the stdout so far once it holds this text (a long-lived process saying it is up). */
  readyText?: string;
  /** Do not keep this process's event loop alive for it (a long-lived process its owner ends). */
  unref?: boolean;
}

/** What a finished command gave, as bytes. */
export interface Collected {
  code: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes written, also past `maxBytes` (what is over is dropped). */
  outBytes: number;
  errBytes: number;
  /** Why it could not start, when it could not. */
  error?: string;
}

/** What a finished command gave, as text (what crosses the spawner helper's channel). */
export interface Finished extends Omit<Collected, 'stdout' | 'stderr'> {
  stdout: string;
  stderr: string;
}

/** A started command: its pid once known, its result once its pipes closed. */
export interface Started {
  pid: Promise<number | undefined>;
  done: Promise<Finished>;
  /** With `readyText`: the stdout up to it; undefined when the command ended without printing it. */
  ready: Promise<string | undefined>;
  /** Say it was killed: then strays holding its pipes delay the result by at most a second. */
  killed(): void;
}

/** A started command whose output is kept as bytes. */
export interface Collecting extends Omit<Started, 'done'> {
  done: Promise<Collected>;
}

/** Start `spec.cmd` in its own process group (detached) and collect what it writes. */
export function collectProcess(spec: Omit<SpawnSpec, 'stdin'> & { stdin: string | Buffer }): Collecting {
  let killed = false;
  let grace: NodeJS.Timeout | undefined;
  let child: ChildProcess | undefined;
  let onExited = () => undefined as void;
  let setReady!: (s: string | undefined) => void;
  const ready = new Promise<string | undefined>((r) => { setReady = r; });
  const done = new Promise<Collected>((settle) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let finished = false;
    const finish = (code: number | null, signal: string | null, error?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(grace);
      setReady(undefined);
      settle({ code, signal, error, outBytes, errBytes, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
    };
    try {
      child = spawn(spec.cmd[0]!, spec.cmd.slice(1), { env: spec.env, cwd: spec.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (e) {
      finish(127, null, (e as Error).message);
      return;
    }
    onExited = () => { grace ??= setTimeout(() => finish(child!.exitCode, child!.signalCode), 1000); };
    let waiting = spec.readyText;
    child.stdout!.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes <= spec.maxBytes) out.push(d);
      if (waiting !== undefined) {
        const text = Buffer.concat(out).toString('utf8');
        if (text.includes(waiting)) { waiting = undefined; setReady(text); }
      }
    });
    child.stderr!.on('data', (d: Buffer) => { errBytes += d.length; if (errBytes <= spec.maxBytes) err.push(d); });
    child.stdin!.on('error', () => undefined); // a command that exits without reading its stdin: its exit says enough
    child.on('error', (e) => finish(127, null, e.message));
    // A killed sandbox's strays may hold the pipes open: do not wait for them forever.
    child.on('exit', () => { if (killed) onExited(); });
    child.on('close', (code, signal) => finish(code, signal));
    child.stdin!.end(spec.stdin);
    if (spec.unref) { child.unref(); for (const s of [child.stdout, child.stderr, child.stdin]) (s as { unref?: () => void } | null)?.unref?.(); }
  });
  return {
    pid: Promise.resolve(child?.pid),
    done,
    ready,
    killed: () => { killed = true; if (child && (child.exitCode !== null || child.signalCode !== null)) onExited(); },
  };
}

/** {@link collectProcess} with the output as text. */
export function spawnHere(spec: SpawnSpec): Started {
  const c = collectProcess(spec);
  return { ...c, done: c.done.then((r) => ({ ...r, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') })) };
}

/**
 * Run a command to its end (killed at `timeoutMs`) and collect its output: for short host-side
 * helpers (machine probes, `tar`). The environment is this process's unless given.
 */
export function collectOutput(cmd: string[], o: { env?: Record<string, string>; stdin?: string | Buffer; timeoutMs?: number; maxBytes?: number } = {}): Promise<Collected> {
  const c = collectProcess({ cmd, env: o.env ?? (process.env as Record<string, string>), stdin: o.stdin ?? '', maxBytes: o.maxBytes ?? 1 << 30 });
  const timer = o.timeoutMs === undefined ? undefined : setTimeout(() => {
    void c.pid.then((pid) => { if (pid) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } });
    c.killed();
  }, o.timeoutMs);
  return c.done.finally(() => clearTimeout(timer));
}
