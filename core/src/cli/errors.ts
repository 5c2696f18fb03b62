import { isClawGymError, messageOf } from '../errors';

/** Exit codes of `clawgym`. */
export const ExitCode = { OK: 0, FAILURE: 1, USAGE: 2 } as const;

/**
 * Print an error for people: the message and the hint, no stack trace — unless
 * `CLAWGYM_DEBUG=1`, or the error is not one ClawGym raised on purpose (then the stack helps).
 */
export function printError(err: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): void {
  const debug = process.env.CLAWGYM_DEBUG === '1';
  if (isClawGymError(err)) {
    write(`clawgym: ${err.message}\n`);
    if (err.hint) write(`  hint: ${err.hint}\n`);
    // The code, for scripts and supervisors that act on the kind of failure (docs/errors.md).
    write(`  code: ${err.code}\n`);
    if (debug && err.stack) write(`${err.stack}\n`);
    return;
  }
  write(`clawgym: unexpected error: ${messageOf(err)}\n`);
  write(debug && err instanceof Error && err.stack ? `${err.stack}\n` : '  (set CLAWGYM_DEBUG=1 for the stack trace)\n');
}
