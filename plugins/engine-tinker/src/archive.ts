import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ClawGymError, ErrorCodes, messageOf } from '@clawgym/core';

const run = promisify(execFile);

/**
 * Pack a folder's contents into `archive` as SkyRL does (`_create_tar_from_directory`,
 * skyrl/backends/skyrl_train_backend.py): a plain, uncompressed tar of `.` whatever the file is
 * called — SkyRL names it `<name>.tar.gz` and skips gzip to save minutes on large checkpoints.
 * Written beside the target and renamed, so a reader never sees half an archive.
 */
export async function packFolder(folder: string, archive: string): Promise<void> {
  await mkdir(dirname(archive), { recursive: true });
  const partial = `${archive}.partial`;
  await run('tar', ['-cf', partial, '-C', folder, '.']);
  await rename(partial, archive);
}

/** Whether bytes start with gzip's magic number (a `.tar.gz` that really is gzipped). */
const gzipped = (head: Buffer) => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

/**
 * Unpack a sampler archive (`.tar.gz` by name; plain tar or gzip by content) into `folder`,
 * once: a folder that already holds a complete unpack (its `.unpacked` marker) is reused. The
 * unpack goes to a sibling folder first and is renamed into place, so an engine never reads a
 * half-written folder. Entries that would land outside the folder are refused by GNU tar itself.
 */
export async function unpackArchive(archive: string, folder: string): Promise<string> {
  if (existsSync(join(folder, '.unpacked'))) return folder;
  let head: Buffer;
  try {
    head = (await readFile(archive)).subarray(0, 2);
  } catch (e) {
    throw new ClawGymError(ErrorCodes.TRAINER_SERVICE, `cannot read the sampler checkpoint archive ${archive}: ${messageOf(e)}`, {
      hint: 'The trainer service writes <checkpointsDir>/<model_id>/sampler_weights/<name>.tar.gz: checkpointsDir must be where this machine sees the service\'s checkpoint folder (a shared file system), or leave it out and set weightsDir so archives are downloaded.',
    });
  }
  const staging = `${folder}.unpacking-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    await run('tar', [gzipped(head) ? '-xzf' : '-xf', archive, '-C', staging, '--no-same-owner']);
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw new ClawGymError(ErrorCodes.TRAINER_SERVICE, `cannot unpack the sampler checkpoint archive ${archive}: ${messageOf(e)}`, { cause: e, hint: 'The archive is incomplete or not a tar file; `tar -tf` it to see what it holds.' });
  }
  await writeFile(join(staging, '.unpacked'), `${archive}\n`);
  await rm(folder, { recursive: true, force: true });
  await mkdir(dirname(folder), { recursive: true });
  await rename(staging, folder);
  return folder;
}

/**
 * Keep the newest `keep` published versions in `dir` (the `step-<N>` folders the trainer unpacked
 * there, and with `archives` their downloaded `step-<N>.tar.gz`), removing older ones: a run of
 * hundreds of steps would otherwise keep every version of the weights on disk.
 */
export async function pruneSteps(dir: string, keep: number, o: { archives: boolean }): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const steps = [...new Set(names.flatMap((n) => /^step-(\d+)(?:\.tar\.gz)?$/.exec(n)?.[1] ?? []).map(Number))].sort((a, b) => b - a);
  for (const step of steps.slice(keep)) {
    await rm(join(dir, `step-${step}`), { recursive: true, force: true });
    if (o.archives) await rm(join(dir, `step-${step}.tar.gz`), { force: true });
  }
}
