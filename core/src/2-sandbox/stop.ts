/**
 * When one command of a sandbox is stopped: at its timeout, or when its abort signal fires
 * (also one that fired before it started). Every provider's `exec` stops its command this
 * way and says `timedOut` only for the first.
 */

/** A command's stop conditions, armed; `clear()` once it ended. */
export interface StopWhen {
  /** The timeout (not an abort) stopped it. */
  readonly timedOut: boolean;
  clear(): void;
}

/** Call `kill` at `o.timeoutMs` or on `o.signal`'s abort, whichever comes first. */
export function stopWhen(o: { timeoutMs?: number; signal?: AbortSignal }, kill: () => void): StopWhen {
  let timedOut = false;
  const timer = o.timeoutMs ? setTimeout(() => { timedOut = true; kill(); }, o.timeoutMs) : undefined;
  if (o.signal?.aborted) kill();
  else o.signal?.addEventListener('abort', kill, { once: true });
  return {
    get timedOut() { return timedOut; },
    clear() {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', kill);
    },
  };
}
