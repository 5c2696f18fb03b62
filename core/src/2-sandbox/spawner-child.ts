/**
 * The spawner helper (see spawner.ts): a small process that starts the sandbox's commands for
 * the runner, whose fork() costs grow with its memory. Messages in: `run`, `killed` and
 * `channel` (a long-lived process whose stdin and stdout are handed to the runner); out: `pid`,
 * `stdin` and `stdout` (with the pipe as the message's handle), `close` (exit status and
 * captured output). It exits when the runner goes away; what it started is left to the
 * sandbox's own cleanup (bubblewrap's --die-with-parent, sweep).
 */
import { spawnHere, type SpawnSpec, type Started } from './collect';
import { channelHere } from './spawner';

type Message = ({ type: 'run'; id: number } & SpawnSpec) | { type: 'killed'; id: number } | { type: 'channel'; id: number; cmd: string[]; env: Record<string, string> };

const started = new Map<number, Started>();
const send = (m: unknown) => { if (process.connected) process.send!(m); };

process.on('SIGINT', () => undefined); // Ctrl-C reaches the whole process group: the runner decides
process.on('disconnect', () => process.exit(0));
process.on('message', (m: Message) => {
  if (m.type === 'killed') { started.get(m.id)?.killed(); return; }
  if (m.type === 'channel') {
    // Its stdin and stdout go over to the runner (and are closed here once sent).
    const c = channelHere(m);
    void c.pid.then((pid) => send({ type: 'pid', id: m.id, pid }));
    void c.stdout.then((s) => { if (process.connected) process.send!({ type: 'stdout', id: m.id }, s as never); });
    void c.stdin.then((s) => { if (process.connected) process.send!({ type: 'stdin', id: m.id }, s as never); });
    void c.done.then((f) => send({ type: 'close', id: m.id, ...f }));
    return;
  }
  // The same capture and post-kill grace as spawning in the runner: spawnHere, run here.
  const s = spawnHere(m);
  started.set(m.id, s);
  void s.pid.then((pid) => send({ type: 'pid', id: m.id, pid }));
  if (m.readyText !== undefined) void s.ready.then((text) => { if (text !== undefined) send({ type: 'ready', id: m.id, text }); });
  void s.done.then((f) => { started.delete(m.id); send({ type: 'close', id: m.id, ...f }); });
});
