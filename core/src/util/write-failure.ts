import { accessSync, constants, existsSync } from 'node:fs';
import { ClawGymError, ErrorCodes, isClawGymError } from '../errors';

/** Why a file system refuses a write, and what to do about it, by error code. */
const CAUSES: Record<string, { what: string; fix: string }> = {
  ENOSPC: { what: 'the disk is full', fix: 'free space on that disk' },
  EDQUOT: { what: 'the disk quota is used up', fix: 'free space or raise the quota' },
  EROFS: { what: 'the file system is read-only', fix: 'remount it read-write (or move the run folder, run.outDir, to a writable disk)' },
  EACCES: { what: 'permission was denied', fix: 'give this user write access to the folder again' },
  EPERM: { what: 'the operation was not permitted', fix: 'give this user write access to the folder again' },
  ENOENT: { what: 'the folder was removed', fix: 'restore the run folder (or start another run with --name)' },
};

/** Whether `err` is a file system's refusal to write (full, read-only, denied, removed). */
export function isWriteFailure(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && (err as NodeJS.ErrnoException).code! in CAUSES && !isClawGymError(err);
}

/**
 * Node's recursive mkdir says ENOENT for a folder it cannot make on a read-only (or unwritable)
 * disk: where the run folder is still there, ask the file system what it refuses.
 */
function actualCode(err: NodeJS.ErrnoException, runDir: string): string {
  if (err.code !== 'ENOENT' || !existsSync(runDir)) return err.code!;
  try {
    accessSync(runDir, constants.W_OK);
    return err.code;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code && code in CAUSES ? code : err.code;
  }
}

/**
 * A write refused in a run folder as CLAWGYM_RUN_DIR_UNWRITABLE: the path, the cause and the fix
 * (then `--resume`, which continues after the last finished step). Anything else is returned as is.
 */
export function runDirWriteError(err: unknown, runDir: string, resume = 'clawgym run --resume'): unknown {
  if (!isWriteFailure(err)) return err;
  const cause = CAUSES[actualCode(err, runDir)]!;
  return new ClawGymError(ErrorCodes.RUN_DIR_UNWRITABLE, `${describeWriteFailure(err, runDir)}; stopped with the state of the last finished step kept in ${runDir}`, {
    cause: err, hint: `${cause.fix}, then \`${resume}\` continues from there`,
  });
}

/** "cannot write <path> (<code>: <cause>)" for a write refused in `runDir`. */
export function describeWriteFailure(err: NodeJS.ErrnoException, runDir: string): string {
  const code = actualCode(err, runDir);
  return `cannot write ${err.path ?? runDir} (${code}: ${CAUSES[code]?.what ?? err.message})`;
}
