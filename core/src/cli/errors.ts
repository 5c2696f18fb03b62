import { isClawGymError, messageOf } from '../errors';

/** Exit codes of `clawgym`. */
export const ExitCode = { OK: 0, FAILURE: 1, USAGE: 2 } as const;

/** The stack of an error and of each of its causes, outermost first (`Caused by: …`). */
export function stackChain(err: unknown): string {
  const lines: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const text = e instanceof Error ? e.stack ?? `${e.name}: ${e.message}` : messageOf(e);
    lines.push(depth === 0 ? text : `Caused by: ${text}`);
    if (!(e instanceof Error)) break;
  }
  return lines.join('\n');
}

/** A cause that ClawGym did not raise on purpose (a plugin's own exception): its stack is what helps. */
const foreignCause = (err: Error): boolean => {
  for (let c = err.cause; c !== undefined; c = (c as { cause?: unknown }).cause) if (!isClawGymError(c)) return true;
  return false;
};

/**
 * Print an error for people: the message and the hint, no stack trace — unless
 * `CLAWGYM_DEBUG=1` (then with its causes' stacks: a plugin's exception wrapped by a hook or a
 * verifier), or the error is not one ClawGym raised on purpose (then the stack helps).
 */
export function printError(err: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): void {
  const debug = process.env.CLAWGYM_DEBUG === '1';
  if (isClawGymError(err)) {
    write(`clawgym: ${err.message}\n`);
    if (err.hint) write(`  hint: ${err.hint}\n`);
    // The code, for scripts and supervisors that act on the kind of failure (docs/errors.md).
    write(`  code: ${err.code}\n`);
    if (debug) write(`${stackChain(err)}\n`);
    else if (foreignCause(err)) write('  (set CLAWGYM_DEBUG=1 for the stack trace of the cause)\n');
    return;
  }
  write(`clawgym: unexpected error: ${messageOf(err)}\n`);
  write(debug && err instanceof Error ? `${stackChain(err)}\n` : '  (set CLAWGYM_DEBUG=1 for the stack trace)\n');
}
