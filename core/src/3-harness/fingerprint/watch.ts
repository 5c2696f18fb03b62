import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '../../errors';
import { fingerprintChanges, type HarnessFingerprint } from './fingerprint';

/** `<runDir>/fingerprints.json`: per harness, the fingerprint pinned when it was first seen, and the last one seen. */
export interface FingerprintFile {
  pinned: Record<string, HarnessFingerprint>;
  last: Record<string, HarnessFingerprint>;
}

export const FINGERPRINTS_FILE = 'fingerprints.json';

/** The run's fingerprint file, or an empty one. */
export async function readFingerprints(runDir: string): Promise<FingerprintFile> {
  try {
    const f = JSON.parse(await readFile(join(runDir, FINGERPRINTS_FILE), 'utf8')) as Partial<FingerprintFile>;
    return { pinned: f.pinned ?? {}, last: f.last ?? {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { pinned: {}, last: {} };
    throw err;
  }
}

/**
 * `clawgym run --frozen`: what the lock says each harness sends (its fingerprints, where it has
 * them), and where a change goes instead of a warning: the run stops.
 */
export interface FrozenFingerprints {
  /** The lock file's fingerprints by harness (those a run of the config had seen when it was written). */
  locked: Readonly<Record<string, HarnessFingerprint | undefined>>;
  /** The lock file, named in the error. */
  file: string;
  /** Stop the run with this error (the rollout that showed the change is not trained). */
  stop: (err: ClawGymError) => void;
}

/**
 * Watches what each harness sends across a run, and across runs into the same folder (a resumed
 * run, or the same config run again): the first fingerprint of a harness is pinned in
 * `<runDir>/fingerprints.json`; every later one is compared with the pinned one and with the last
 * one seen, and a difference is told to `warn` once, naming what changed. A harness release that
 * changed its system prompt or tools would otherwise train the policy on another prompt unseen.
 * Under `frozen` the first one is compared with the lock's as well, and any difference stops the
 * run with CLAWGYM_LOCK_MISMATCH instead: a frozen run trains on what was locked or not at all.
 */
export class FingerprintWatch {
  private file?: FingerprintFile;
  private readonly told = new Set<string>();
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly runDir: string, private readonly warn: (message: string) => void, private readonly frozen?: FrozenFingerprints) {}

  /**
   * Note the fingerprints of some rollouts (those that have one; the first per harness counts).
   * Calls are taken one at a time, in order: rollouts that end together do not race on the file.
   */
  observe(fingerprints: readonly (HarnessFingerprint | undefined)[], where: string): Promise<void> {
    const next = this.queue.then(() => this.note(fingerprints, where));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async note(fingerprints: readonly (HarnessFingerprint | undefined)[], where: string): Promise<void> {
    const file = this.file ??= await readFingerprints(this.runDir);
    const seen = new Map<string, HarnessFingerprint>();
    for (const f of fingerprints) if (f && !seen.has(f.harness)) seen.set(f.harness, f);
    if (seen.size === 0) return;
    for (const [harness, f] of seen) {
      const locked = this.frozen?.locked[harness];
      const unlocked = locked ? fingerprintChanges(locked, f) : [];
      // Not pinned either: once the locked CLI is put back, the resumed run matches its pin.
      if (unlocked.length) { this.tell(harness, `the one in ${this.frozen!.file}`, unlocked, where); continue; }
      const pinned = file.pinned[harness];
      const last = file.last[harness];
      if (!pinned) file.pinned[harness] = f;
      else this.tell(harness, `the run's pinned fingerprint`, fingerprintChanges(pinned, f), where);
      // Under --frozen the last one seen differed only if it stopped the run (untrained): back to the pinned one is right.
      if (!this.frozen && last && pinned && fingerprintChanges(pinned, last).length > 0) this.tell(harness, 'the last one seen', fingerprintChanges(last, f), where);
      file.last[harness] = f;
    }
    await writeFile(join(this.runDir, FINGERPRINTS_FILE), `${JSON.stringify(file, null, 2)}\n`);
  }

  private tell(harness: string, against: string, changes: string[], where: string): void {
    if (changes.length === 0) return;
    if (this.frozen) {
      this.frozen.stop(new ClawGymError(ErrorCodes.LOCK_MISMATCH, `harness ${harness}: what it sends the model differs from ${against} (${where}): ${changes.join('; ')}; a --frozen run stops rather than train on another prompt`, {
        hint: `Put back the harness CLI the lock names (${this.frozen.file}), then \`clawgym run --resume --frozen\` goes on from the last finished step; if the change is meant, run \`clawgym lock\` and start a new run.`,
      }));
      return;
    }
    const message = `harness ${harness}: what it sends the model differs from ${against} (${where}): ${changes.join('; ')}. ` +
      `The policy now trains on another prompt; if the CLI was upgraded on purpose, start a new run (or delete ${join(this.runDir, FINGERPRINTS_FILE)} to pin the new one)`;
    // Once per change, wherever it is seen next (a later step, the held-out evaluation).
    const key = `${harness}\n${against}\n${changes.join('\n')}`;
    if (this.told.has(key)) return;
    this.told.add(key);
    this.warn(message);
  }
}
