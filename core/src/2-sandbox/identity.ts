import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { SandboxIdentity } from '../contracts/sandbox';
import { hashTree } from '../util/content-hash';

/**
 * What the local sandbox's commands run on, for the run lock: its root filesystem folder by the
 * hash of every file in it, or, without one, this machine's system as /etc/os-release names it
 * (the harness CLIs it runs are locked by their packages).
 */
export async function localIdentity(rootfs: string | undefined): Promise<SandboxIdentity> {
  if (rootfs !== undefined) {
    const folder = resolve(rootfs);
    return { kind: 'rootfs', ref: folder, digest: `sha256:${await hashTree(folder)}` };
  }
  const release = await readFile('/etc/os-release', 'utf8').catch(() => '');
  const name = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release)?.[1] ?? process.platform;
  return { kind: 'host', ref: `${name} (${process.arch})`, digest: `sha256:${createHash('sha256').update(`${release}\n${process.platform} ${process.arch}`).digest('hex')}` };
}
