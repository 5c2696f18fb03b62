/**
 * The workspace of a container on a Docker host that cannot see our filesystem. The sandbox
 * keeps a host folder (`workspaceHostPath`: the task's setup writes there, the verifier reads
 * there) and the container has its own volume; the two meet through the engine's archive API:
 * the folder is put into the container before its first command ({@link pushDir}), and the
 * container's workspace is got back into the folder before the verifier runs ({@link pullDir},
 * `Sandbox.sync()`), which works on a stopped container too (after a wall-clock kill).
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { ClawGymError, collectOutput, ErrorCodes } from '@clawgym/core';
import type Docker from 'dockerode';

/** Run `tar` on the host with stdin/stdout as buffers (core's spawn-and-collect; the archive is not cut short). */
export async function hostTar(args: string[], input?: Buffer): Promise<Buffer> {
  const r = await collectOutput(['tar', ...args], { stdin: input, maxBytes: Infinity });
  if (r.code !== 0) throw new ClawGymError(ErrorCodes.SANDBOX_FILE_FAILED, `tar ${args.join(' ')}: ${(r.error ?? r.stderr.toString('utf8')).trim() || `exit ${r.code ?? r.signal}`}`);
  return r.stdout;
}

/**
 * Put the contents of host folder `dir` into `target` in the container, every entry owned by
 * `uid:gid` (the engine unpacks as root, so ownership comes from the archive: the agent's user
 * owns what the setup wrote, with no chown inside). `target` must be a volume when the
 * container's root is read-only. The engine leaves an existing folder's own owner as it is
 * when unpacking into it: with `ownTarget`, `target` itself is written as an entry of its
 * parent, so the agent owns it too (a task image's WORKDIR made by root: the agent could not
 * create a file in its own workspace). That needs a writable parent: a task image's root.
 */
export async function pushDir(container: Docker.Container, dir: string, target: string, owner: { uid: number; gid: number }, o: { ownTarget?: boolean } = {}): Promise<void> {
  const ids = [`--owner=${owner.uid}`, `--group=${owner.gid}`, '--numeric-owner'];
  if (!o.ownTarget || target === '/') {
    await container.putArchive(await hostTar(['-C', dir, ...ids, '-c', '.']), { path: target });
    return;
  }
  const name = posix.basename(target);
  const tar = await hostTar(['-C', dir, ...ids, `--transform=s,^\\.,${name},`, '-c', '.']);
  await container.putArchive(tar, { path: posix.dirname(target) });
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

/**
 * Host paths for the container to see at the same paths: volumes filled through the archive API
 * (read-only binds need our filesystem). `entries`: only these names of the folder; `mountPoints`:
 * folders put in empty (where other volumes are mounted).
 */
export async function pushPaths(container: Docker.Container, paths: ReadonlyArray<{ host: string; target: string; entries?: string[]; mountPoints?: string[] }>): Promise<void> {
  for (const p of paths) {
    const names = [...(p.entries ?? ['.']), ...(p.mountPoints?.length ? ['--no-recursion', ...p.mountPoints] : [])];
    const tar = await hostTar(['-C', p.host, '--owner=0', '--group=0', '--numeric-owner', '-c', ...names]);
    await container.putArchive(tar, { path: p.target });
  }
}
