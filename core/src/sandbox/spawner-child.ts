/**
 * The spawner helper (see spawner.ts): a small process that starts the sandbox's commands for
 * the runner, whose fork() costs grow with its memory. Messages in: `run` and `killed`; out:
 * `pid`, `close` (exit status and captured output). It exits when the runner goes away; what it
 * started is left to the sandbox's own cleanup (bubblewrap's --die-with-parent, sweep).
 */
import { spawn } from 'node:child_process';

interface RunMessage { type: 'run'; id: number; cmd: string[]; env: Record<string, string>; cwd?: string; stdin: string; maxBytes: number }
interface KilledMessage { type: 'killed'; id: number }

/** After the command itself exited, how long strays holding its pipes may delay the result, once it was killed. */
const KILLED_GRACE_MS = 1000;

const killedHooks = new Map<number, () => void>();
const send = (m: unknown) => { if (process.connected) process.send!(m); };

function run(m: RunMessage): void {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outBytes = 0;
  let errBytes = 0;
  let finished = false;
  let exited = false;
  let killed = false;
  let grace: NodeJS.Timeout | undefined;
  const finish = (code: number | null, signal: string | null, error?: string) => {
    if (finished) return;
    finished = true;
    clearTimeout(grace);
    killedHooks.delete(m.id);
    send({ type: 'close', id: m.id, code, signal, error, outBytes, errBytes, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
  };
  let child;
  try {
    child = spawn(m.cmd[0]!, m.cmd.slice(1), { env: m.env, cwd: m.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  } catch (e) {
    finish(127, null, (e as Error).message);
    return;
  }
  send({ type: 'pid', id: m.id, pid: child.pid });
  const startGrace = () => { grace ??= setTimeout(() => finish(child.exitCode, child.signalCode), KILLED_GRACE_MS); };
  killedHooks.set(m.id, () => { killed = true; if (exited) startGrace(); });
  child.stdout.on('data', (d: Buffer) => { outBytes += d.length; if (outBytes <= m.maxBytes) out.push(d); });
  child.stderr.on('data', (d: Buffer) => { errBytes += d.length; if (errBytes <= m.maxBytes) err.push(d); });
  child.stdin.on('error', () => undefined);
  child.on('error', (e) => finish(127, null, e.message));
  // A killed sandbox's strays may hold the pipes open: do not wait for them forever.
  child.on('exit', () => { exited = true; if (killed) startGrace(); });
  child.on('close', (code, signal) => finish(code, signal));
  child.stdin.end(m.stdin);
}

process.on('SIGINT', () => undefined); // Ctrl-C reaches the whole process group: the runner decides
process.on('disconnect', () => process.exit(0));
process.on('message', (m: RunMessage | KilledMessage) => {
  if (m.type === 'run') run(m);
  else if (m.type === 'killed') killedHooks.get(m.id)?.();
});
