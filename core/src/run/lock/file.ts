import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ResolvedConfig } from '../../config/schema';
import type { RunLock } from '../../contracts/lock';
import { ClawGymError, ErrorCodes } from '../../errors';
import { readFingerprints } from '../../3-harness/fingerprint/watch';
import { LOCK_FILE, lockDifferences } from '../../report/lock-diff';

/** Where `clawgym lock` writes the config's lock: beside the config file (or in its folder, for a config given in code). */
export function lockFileOf(config: ResolvedConfig): string {
  return join(config.configFile ? dirname(config.configFile) : config.rootDir, LOCK_FILE);
}

/** A lock file's content; `what` says whose it is in the error when there is none. */
export async function readLock(file: string, what: string, hint: string): Promise<RunLock> {
  if (!existsSync(file)) throw new ClawGymError(ErrorCodes.LOCK_MISSING, `${what} has no lock (${file} does not exist)`, { hint });
  return JSON.parse(await readFile(file, 'utf8')) as RunLock;
}

export async function writeLock(file: string, lock: RunLock): Promise<void> {
  await writeFile(file, `${JSON.stringify(lock, null, 2)}\n`);
}

/**
 * `clawgym run --frozen`: refuse when what the run would use differs from the lock, naming
 * every difference (`config: false`: all but the config's hash).
 */
export function refuseUnlike(frozen: RunLock, current: RunLock, file: string, o: { config?: boolean; hint?: string } = {}): void {
  const differences = lockDifferences(frozen, current, o);
  if (differences.length === 0) return;
  throw new ClawGymError(ErrorCodes.LOCK_MISMATCH,
    `what this run would use differs from ${file} in ${differences.length} ${differences.length === 1 ? 'place' : 'places'}:\n${differences.map((d) => `  ${d}`).join('\n')}`,
    { hint: o.hint ?? 'Put back what changed (reinstall the locked harness version, restore the file), or, if the change is meant, run `clawgym lock` to lock it and commit the new lock.' });
}

/** The run's lock with the fingerprints its harnesses showed in the run (known only once they have sent a call). */
export async function withRunFingerprints(file: string, runDir: string): Promise<void> {
  if (!existsSync(file)) return;
  const lock = JSON.parse(await readFile(file, 'utf8')) as RunLock;
  const seen = (await readFingerprints(runDir)).last;
  let changed = false;
  for (const [name, h] of Object.entries(lock.harnesses)) {
    if (seen[name] && JSON.stringify(seen[name]) !== JSON.stringify(h.fingerprint)) { h.fingerprint = seen[name]; changed = true; }
  }
  if (changed) await writeLock(file, lock);
}
