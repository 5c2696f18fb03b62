/**
 * What a local sandbox leaves on the host and how it is removed: its folder
 * `<root>/<runId>/<rolloutId>/` with an `owner.json` (runner pid and start time, host, cgroups),
 * its cgroups and its marked processes. `destroy()` removes one sandbox's; `sweepSandboxes`
 * finds what killed runners left behind, leaving live owners' sandboxes alone.
 */
import { chmod, lstat, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SweepReport } from '../contracts/sandbox';
import { killCgroup, removeCgroup } from './cgroups';
import { unmountUnder } from './disk';
import { killMarked } from './marking';
import { ownerAlive, readOwnerFile, type OwnerStamp } from './owner';

/** `owner.json` in a sandbox's folder. */
export interface OwnerFile extends OwnerStamp {
  runId: string;
  /** The project folder of the run that made it (absent: made by an older ClawGym). */
  project?: string;
  rolloutId: string;
  created: string;
  mode: 'bubblewrap' | 'fallback';
  cgroups: string[];
}

/**
 * rm -rf that also copes with folders a sandboxed process made read-only, and that first
 * unmounts what is mounted under `dir` (a sandbox's limited disk), never reaching into a mount.
 */
export async function removeTree(dir: string): Promise<void> {
  await unmountUnder(dir);
  try { await rm(dir, { recursive: true, force: true }); return; } catch { /* fix permissions below */ }
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p).catch(() => undefined);
    if (!st?.isDirectory()) return;
    await chmod(p, 0o700).catch(() => undefined);
    for (const e of await readdir(p).catch(() => [] as string[])) await walk(join(p, e));
  };
  await walk(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Kill what is left of one sandbox (cgroups, marked processes) and remove its cgroups and folder. */
export async function removeSandbox(dir: string, cgroups: string[], removed: string[] = []): Promise<string[]> {
  for (const cg of cgroups) for (const pid of await killCgroup(cg)) removed.push(`process ${pid}`);
  for (const pid of await killMarked((v) => v === dir)) removed.push(`process ${pid}`);
  for (const cg of cgroups) if (await removeCgroup(cg)) removed.push(cg);
  await removeTree(dir);
  return removed;
}

/** A folder made in the last minute: its owner file may not be written yet. */
async function isFresh(dir: string): Promise<boolean> {
  const st = await stat(dir).catch(() => undefined);
  return st !== undefined && Date.now() - st.mtimeMs < 60_000;
}

/**
 * Remove the sandboxes under `root` (of `runId`, or of every run) whose owner is dead, and stray
 * marked processes. With `project`, another project's sandboxes (a dead run of the same name
 * included) are left alone; those that name no project (made through the library) are swept.
 */
export async function sweepSandboxes(root: string, runId?: string, project?: string): Promise<SweepReport> {
  const removed: string[] = [];
  const runs = runId !== undefined ? [runId] : await readdir(root).catch(() => [] as string[]);
  const live = new Set<string>();
  for (const run of runs) {
    const runDir = join(root, run);
    for (const rollout of await readdir(runDir).catch(() => [] as string[])) {
      const dir = join(runDir, rollout);
      const owner = await readOwnerFile<OwnerFile>(join(dir, 'owner.json'));
      if (project !== undefined && owner?.project !== undefined && owner.project !== project) { live.add(dir); continue; }
      if (owner ? ownerAlive(owner) : await isFresh(dir)) { live.add(dir); continue; }
      await removeSandbox(dir, owner?.cgroups ?? [], removed);
      removed.push(dir);
    }
    await rmdir(runDir).catch(() => undefined); // only when empty
  }
  // Processes labelled with a sandbox folder that is gone (or whose owner is dead).
  const scope = runId !== undefined ? join(root, runId) + '/' : root + '/';
  const strays = await killMarked((v) => v.startsWith(scope) && !live.has(v));
  for (const pid of strays) removed.push(`process ${pid}`);
  return { removed: [...new Set(removed)] };
}
