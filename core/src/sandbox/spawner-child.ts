/**
 * The spawner helper (see spawner.ts): a small process that starts the sandbox's commands for
 * the runner, whose fork() costs grow with its memory. Messages in: `run` and `killed`; out:
 * `pid`, `close` (exit status and captured output). It exits when the runner goes away; what it
 * started is left to the sandbox's own cleanup (bubblewrap's --die-with-parent, sweep).
 */
import { spawnHere, type SpawnSpec, type Started } from './collect';

type Message = ({ type: 'run'; id: number } & SpawnSpec) | { type: 'killed'; id: number };

const started = new Map<number, Started>();
const send = (m: unknown) => { if (process.connected) process.send!(m); };

process.on('SIGINT', () => undefined); // Ctrl-C reaches the whole process group: the runner decides
process.on('disconnect', () => process.exit(0));
process.on('message', (m: Message) => {
  if (m.type === 'killed') { started.get(m.id)?.killed(); return; }
  // The same capture and post-kill grace as spawning in the runner: spawnHere, run here.
  const s = spawnHere(m);
  started.set(m.id, s);
  void s.pid.then((pid) => send({ type: 'pid', id: m.id, pid }));
  if (m.readyText !== undefined) void s.ready.then((text) => { if (text !== undefined) send({ type: 'ready', id: m.id, text }); });
  void s.done.then((f) => { started.delete(m.id); send({ type: 'close', id: m.id, ...f }); });
});
