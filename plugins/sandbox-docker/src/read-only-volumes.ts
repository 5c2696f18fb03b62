import { createHash } from 'node:crypto';
import type { ownerStamp } from '@clawgym/core';
import type Docker from 'dockerode';
import { removeVolume } from './containers';
import type { DockerHost } from './hosts';
import { LABEL_OWNER, LABEL_RUN } from './layout';
import { pushPaths } from './remote-workspace';

/**
 * A run's read-only folders as volumes on remote hosts, each made once per run and folder (a
 * harness's CLI is hundreds of MB: copying it into every container made each sandbox cost
 * seconds), filled through a container that only holds it, shared by the run's sandboxes and
 * removed by {@link removeAll} or a later sweep.
 */
export class ReadOnlyVolumes {
  private readonly volumes = new Map<string, { host: DockerHost; name: string; ready: Promise<void> }>();

  constructor(private readonly image: string) {}

  /** Mounts of `dirs` on `host` for a sandbox of `runId`, made and filled the first time. */
  async mounts(host: DockerHost, runId: string, owner: ReturnType<typeof ownerStamp>, dirs: Map<string, { entries?: string[]; mountPoints: string[] }>): Promise<Docker.MountSettings[]> {
    const mounts: Docker.MountSettings[] = [];
    for (const [dir, { entries, mountPoints }] of dirs) {
      const key = JSON.stringify([host.url, runId, dir, entries ?? null, mountPoints]);
      let v = this.volumes.get(key);
      if (!v) {
        const name = `clawgym-ro-${runId.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 40)}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
        const ready = (async () => {
          await host.docker.createVolume({ Name: name, Labels: { [LABEL_RUN]: runId, [LABEL_OWNER]: JSON.stringify(owner) } });
          const filler = await host.docker.createContainer({
            Image: this.image, Cmd: ['true'], Labels: { [LABEL_RUN]: runId, [LABEL_OWNER]: JSON.stringify(owner) },
            HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: name, Target: dir }] },
          });
          try {
            await pushPaths(filler, [{ host: dir, target: dir, entries, mountPoints }]);
          } finally {
            await filler.remove({ force: true }).catch(() => undefined);
          }
        })();
        v = { host, name, ready };
        this.volumes.set(key, v);
        // A failed fill is tried again by the next sandbox, not remembered.
        const made = v;
        ready.catch(() => { if (this.volumes.get(key) === made) this.volumes.delete(key); });
      }
      await v.ready;
      mounts.push({ Type: 'volume', Source: v.name, Target: dir, ReadOnly: true });
    }
    return mounts;
  }

  /** Remove every volume made, once no container holds them. */
  async removeAll(): Promise<void> {
    const volumes = [...this.volumes.values()];
    this.volumes.clear();
    await Promise.all(volumes.map(async (v) => { await v.ready.catch(() => undefined); await removeVolume(v.host.docker, v.name); }));
  }
}
