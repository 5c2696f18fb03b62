/**
 * The workspace of a container on a Docker host that cannot see our filesystem. The sandbox
 * keeps a host folder (`workspaceHostPath`: the task's setup writes there, the verifier reads
 * there) and the container has its own volume; the two meet through the engine's archive API:
 * the folder is put into the container before its first command ({@link pushDir}), and the
 * container's workspace is got back into the folder before the verifier runs ({@link pullDir},
 * `Sandbox.sync()`), which works on a stopped container too (after a wall-clock kill).
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';

/** Run `tar` on the host with stdin/stdout as buffers. */
export function hostTar(args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Without input tar's stdin is closed: writing to a pipe tar may already have left raced
    // its exit (EPIPE). With input, a tar that stops reading says why through its exit code.
    const child = spawn('tar', args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`tar ${args.join(' ')}: ${err.trim()}`))));
    if (input) child.stdin!.on('error', () => undefined).end(input);
  });
}

/**
 * Put the contents of host folder `dir` into `target` in the container, every entry owned by
 * `uid:gid` (the engine unpacks as root, so ownership comes from the archive: the agent's user
 * owns what the setup wrote, with no chown inside). `target` must be a volume when the
 * container's root is read-only.
 */
export async function pushDir(container: Docker.Container, dir: string, target: string, owner: { uid: number; gid: number }): Promise<void> {
  const tar = await hostTar(['-C', dir, `--owner=${owner.uid}`, `--group=${owner.gid}`, '--numeric-owner', '-c', '.']);
  await container.putArchive(tar, { path: target });
}

/** Replace the contents of host folder `dir` with those of `source` in the container. */
export async function pullDir(container: Docker.Container, source: string, dir: string): Promise<void> {
  const stream = await container.getArchive({ path: `${source}/.` });
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  await mkdir(dir, { recursive: true });
  for (const e of await readdir(dir)) await rm(join(dir, e), { recursive: true, force: true });
  await hostTar(['-x', '-C', dir, '--no-same-owner'], Buffer.concat(chunks));
}

/** A host path for the container to see at the same path: a volume filled through the archive API (read-only binds need our filesystem). */
export async function pushPaths(container: Docker.Container, paths: ReadonlyArray<{ host: string; target: string; entries?: string[] }>): Promise<void> {
  for (const p of paths) {
    const tar = await hostTar(['-C', p.host, '--owner=0', '--group=0', '--numeric-owner', '-c', ...(p.entries ?? ['.'])]);
    await container.putArchive(tar, { path: p.target });
  }
}
