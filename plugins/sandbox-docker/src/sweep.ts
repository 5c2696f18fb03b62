import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { messageOf, ownerAlive, parseOwner, readOwnerFile, removeTree } from '@clawgym/core';
import type Docker from 'dockerode';
import { removeContainer, removeVolume } from './containers';
import { isUnreachable, type DockerHost } from './hosts';
import { DIR_PREFIX, LABEL_OWNER, LABEL_ROOT, LABEL_RUN, MARKER } from './layout';

/**
 * A dead runner's containers and read-only volumes on one host, with their host folders. A host
 * that does not answer is marked down and left for a later sweep when there are others.
 */
export async function sweepHost(host: DockerHost, runId: string | undefined, removed: string[], oneOfMany: boolean, project?: string): Promise<void> {
  // Only what a dead runner left, of this project when one is named.
  const keep = (label: string | undefined) => {
    const owner = parseOwner<{ project?: string }>(label);
    return ownerAlive(owner ?? {}) || (project !== undefined && owner?.project !== undefined && owner.project !== project);
  };
  const label = runId === undefined ? LABEL_RUN : `${LABEL_RUN}=${runId}`;
  let containers: Docker.ContainerInfo[];
  try {
    containers = await host.docker.listContainers({ all: true, filters: { label: [label] } });
  } catch (err) {
    if (oneOfMany && isUnreachable(err)) { host.markDown(messageOf(err)); return; }
    throw err;
  }
  for (const c of containers) {
    // Only what a dead runner left: a live run's containers are in use (gc beside a running run).
    if (keep(c.Labels[LABEL_OWNER])) continue;
    await removeContainer(host.docker.getContainer(c.Id));
    removed.push(`container ${c.Names[0]?.replace(/^\//, '') ?? c.Id}`);
    const root = c.Labels[LABEL_ROOT];
    if (root && basename(root).startsWith(DIR_PREFIX) && existsSync(root)) {
      await removeTree(root);
      removed.push(`dir ${root}`);
    }
  }
  // A dead run's read-only volumes (its containers are gone by now).
  const { Volumes: volumes } = await host.docker.listVolumes({ filters: { label: [label] } });
  for (const v of volumes ?? []) {
    if (keep(v.Labels?.[LABEL_OWNER])) continue;
    await removeVolume(host.docker, v.Name);
    removed.push(`volume ${v.Name}`);
  }
}

/** Host folders of sandboxes whose container was never created or is already gone, of dead runners. */
export async function sweepFolders(tmpDir: string, runId: string | undefined, removed: string[], project?: string): Promise<void> {
  for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpDir, name);
    const marker = await readOwnerFile<{ runId?: string; project?: string }>(join(dir, MARKER));
    if (!marker) continue;
    if (runId !== undefined && marker.runId !== runId) continue;
    if (project !== undefined && marker.project !== undefined && marker.project !== project) continue;
    if (ownerAlive(marker)) continue;
    await removeTree(dir);
    removed.push(`dir ${dir}`);
  }
}
