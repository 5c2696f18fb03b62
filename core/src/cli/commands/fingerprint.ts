import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ClawGymError, ErrorCodes } from '../../errors';
import { fingerprintChanges, formatFingerprint } from '../../3-harness/fingerprint/fingerprint';
import { FINGERPRINTS_FILE, readFingerprints } from '../../3-harness/fingerprint/watch';
/** What the command writes to, and where it runs. */
type CliIo = { out: (s: string) => void; cwd: string };

/** The run folders under `runs/` that hold a fingerprint file, newest first. */
function runsWithFingerprints(cwd: string): string[] {
  const root = resolve(cwd, 'runs');
  if (!existsSync(root)) return [];
  return readdirSync(root).map((d) => join(root, d)).filter((d) => existsSync(join(d, FINGERPRINTS_FILE)))
    .sort((a, b) => statSync(join(b, FINGERPRINTS_FILE)).mtimeMs - statSync(join(a, FINGERPRINTS_FILE)).mtimeMs);
}

/**
 * `clawgym harness fingerprint <harness> [run]`: what the harness sends the model besides the task
 * (system prompt hash, tool names and schema hashes, CLI version), as pinned in a run and as last
 * seen there, and what changed between the two. Default run: the newest under `runs/` that saw it.
 */
export async function fingerprintCommand(harness: string, run: string | undefined, opts: { json?: boolean }, io: CliIo): Promise<void> {
  const candidates = run ? [resolve(io.cwd, run)] : runsWithFingerprints(io.cwd);
  for (const dir of candidates) {
    const file = await readFingerprints(dir);
    const pinned = file.pinned[harness];
    if (!pinned) continue;
    const last = file.last[harness] ?? pinned;
    const changes = fingerprintChanges(pinned, last);
    if (opts.json) { io.out(`${JSON.stringify({ run: dir, pinned, last, changes }, null, 2)}\n`); return; }
    io.out(`${formatFingerprint(last)}\n\n${changes.length ? `differs from the fingerprint pinned in ${dir}: ${changes.join('; ')}` : `as pinned in ${dir}`}\n`);
    return;
  }
  const where = run ? resolve(io.cwd, run) : `any run under ${resolve(io.cwd, 'runs')}`;
  throw new ClawGymError(ErrorCodes.USAGE, `no fingerprint of harness "${harness}" recorded in ${where}`,
    { hint: `a run records each harness's fingerprint (${FINGERPRINTS_FILE}) after its first step: run \`clawgym run\` with the harness, or name the run folder` });
}
