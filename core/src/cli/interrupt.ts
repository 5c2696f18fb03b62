/**
 * Ctrl-C handling for long commands: the first SIGINT (or SIGTERM) aborts `controller` — stop
 * starting work, kill running harnesses, destroy sandboxes, flush records — and says so; a
 * second one forces the process out at once. Returns a function that removes the handlers.
 */
export function onInterrupt(controller: AbortController, say: (s: string) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count === 1) {
      say(`\n${signal}: stopping — no new rollouts; killing running harnesses, removing sandboxes, flushing records. Press Ctrl-C again to force.\n`);
      controller.abort();
    } else {
      say(`\n${signal} again: forced exit; run \`clawgym gc\` to remove what was left.\n`);
      process.exit(130);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => { process.off('SIGINT', handler); process.off('SIGTERM', handler); };
}

/**
 * For servers that run until told to stop: listens for Ctrl-C (and the caller's `signal`) at
 * once — so call it before printing "Press Ctrl-C" — and resolves when either comes, with the
 * handlers removed.
 */
export function untilStopped(io: { out: (s: string) => void; signal?: AbortSignal }): Promise<void> {
  const stopped = new AbortController();
  const remove = onInterrupt(stopped, io.out);
  if (io.signal?.aborted) stopped.abort();
  else io.signal?.addEventListener('abort', () => stopped.abort(), { once: true });
  return new Promise<void>((done) => {
    const finish = () => { remove(); done(); };
    if (stopped.signal.aborted) finish();
    else stopped.signal.addEventListener('abort', finish, { once: true });
  });
}
