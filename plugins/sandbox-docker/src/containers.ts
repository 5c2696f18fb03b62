import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, lchown, lstat, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ClawGymError, ErrorCodes, messageOf, type SandboxSpec } from '@clawgym/core';
import Docker from 'dockerode';
import { FORWARDER_READY } from './layout';

export function parseUser(user: string): { uid: number; gid: number } {
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `user must be a numeric uid[:gid], got "${user}"`);
  return { uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
}

/** netns-run.js and forwarder.js from @clawgym/core's build, copied into each sandbox. */
export function netnsRunFiles(): string[] {
  const dir = join(dirname(require.resolve('@clawgym/core/package.json')), 'dist', '2-sandbox');
  const files = ['netns-run.js', 'forwarder.js'].map((f) => join(dir, f));
  for (const f of files) if (!existsSync(f)) throw new ClawGymError(ErrorCodes.NOT_BUILT, `${f} is missing`, { hint: 'run npm run build' });
  return files;
}

export function statusOf(err: unknown): number | undefined {
  return (err as { statusCode?: number })?.statusCode;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Change the owner of everything under `path` (symlinks themselves, never their targets). */
export async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  let st;
  try { st = await lstat(path); } catch { return; }
  if (st.uid !== uid || st.gid !== gid) {
    try {
      await lchown(path, uid, gid);
    } catch {
      // Not root: let the container user write it anyway.
      if (!st.isSymbolicLink()) await chmod(path, st.mode | (st.isDirectory() ? 0o777 : 0o666)).catch(() => {});
    }
  }
  if (st.isDirectory()) {
    for (const e of await readdir(path).catch(() => [] as string[])) await chownTree(join(path, e), uid, gid);
  }
}

/**
 * Wait until the container's forwarder says it listens (its first line of output). The log
 * stream with `follow` replays what was printed before it was opened, so nothing is missed.
 */
export async function forwarderListening(container: Docker.Container, rolloutId: string, timeoutMs = 30_000): Promise<void> {
  const stream = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream & { destroy(): void };
  let seen = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const gone = (why: string) => reject(new ClawGymError(ErrorCodes.SANDBOX_GONE,
        `sandbox ${rolloutId}: the model forwarder in its container ${why}${seen.trim() ? `; it printed: ${seen.replace(/[^\x20-\x7e\n]/g, '').trim().slice(0, 500)}` : ''}`,
        { hint: 'The sandbox image needs node on PATH and /opt/clawgym/forwarder.js (rebuild it with scripts/docker-image.sh).' }));
      const timer = setTimeout(() => gone(`did not listen within ${timeoutMs} ms`), timeoutMs);
      stream.on('data', (d: Buffer) => {
        seen += d.toString('latin1');
        if (seen.includes(FORWARDER_READY)) { clearTimeout(timer); resolve(); }
      });
      stream.once('error', (err) => { clearTimeout(timer); gone(`could not be watched (${messageOf(err)})`); });
      stream.once('end', () => { clearTimeout(timer); gone('exited before it listened'); });
    });
  } finally {
    stream.destroy();
  }
}

export async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: true });
  } catch (err) {
    const status = statusOf(err);
    if (status === 404) return;
    if (status === 409) { // removal already in progress
      for (let i = 0; i < 100; i++) {
        await sleep(100);
        try { await container.inspect(); } catch (e) { if (statusOf(e) === 404) return; }
      }
    }
    throw err;
  }
}

/**
 * Remove a volume; one already gone is fine. A container that held it can still be "removing"
 * for a moment after its removal returned (409 "volume is in use"): tried again for up to 5 s.
 */
export async function removeVolume(docker: Docker, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await docker.getVolume(name).remove();
      return;
    } catch (err) {
      if (statusOf(err) === 404) return;
      if (statusOf(err) !== 409 || attempt >= 50) throw err;
      await sleep(100);
    }
  }
}

/**
 * The read-only paths a sandbox asked for, as folders to mount: a folder asked for whole, or a
 * file's folder holding the listed files only (`entries`), with the mount points of folders
 * below it (`mountPoints`, empty folders: a read-only volume cannot have them made later).
 */
export async function readOnlyFolders(readOnly: readonly string[]): Promise<Map<string, { entries?: string[]; mountPoints: string[] }>> {
  const dirs = new Map<string, { entries?: string[]; mountPoints: string[] }>();
  for (const p of readOnly) {
    const st = await stat(p).catch(() => undefined);
    if (!st) continue; // as with binds: a path that does not exist is skipped
    if (st.isDirectory()) { dirs.set(p, { mountPoints: [] }); continue; }
    const parent = dirname(p);
    const d = dirs.get(parent);
    if (d && !d.entries) continue;
    dirs.set(parent, { entries: [...(d?.entries ?? []), basename(p)], mountPoints: [] });
  }
  for (const [dir, d] of dirs) {
    if (!d.entries) continue;
    for (const inner of dirs.keys()) {
      if (!inner.startsWith(`${dir}/`)) continue;
      const parts = inner.slice(dir.length + 1).split('/');
      for (let i = 1; i <= parts.length; i++) d.mountPoints.push(parts.slice(0, i).join('/'));
    }
  }
  return dirs;
}

export function containerName(spec: SandboxSpec): string {
  const clean = (s: string) => s.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 60);
  return `clawgym-${clean(spec.runId)}-${clean(spec.rolloutId)}-${randomBytes(3).toString('hex')}`;
}
