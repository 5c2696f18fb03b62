import { definePlugin, z } from '@clawgym/core';
import { DockerSandboxProvider } from './provider';

export { DockerSandboxProvider, dockerSandboxProvider, dockerSocketPath, type DockerSandboxOptions } from './provider';
export { DEFAULT_IMAGE, HOME, IMAGE_RECIPE, LABEL_ROLLOUT, LABEL_ROOT, LABEL_RUN, NETNS_RUN, PROXY_SOCKET, SANDBOX_PROXY_PORT, WORKSPACE } from './layout';
export { engineLimitEnforcement, limitEnforcementHere } from './limits';
export { DockerHost, DockerHosts, type DockerHostOption, type DockerHostSpec } from './hosts';

/** `@clawgym/sandbox-docker`: provides the `docker` sandbox. */
export default definePlugin({
  name: 'clawgym:sandbox-docker',
  core: '^0.1.0',
  options: z.strictObject({
    /** Docker API socket (default DOCKER_HOST when unix://, else /var/run/docker.sock). */
    socketPath: z.string().optional(),
    /** Several engines: unix://…, tcp://host:port (tls: PEM files), ssh://user@host; checked again by the provider. */
    hosts: z.array(z.union([z.string(), z.strictObject({
      url: z.string(),
      tls: z.strictObject({ ca: z.string(), cert: z.string(), key: z.string() }).optional(),
      sshKey: z.string().optional(),
      sshKnownHosts: z.string().optional(),
      sshDockerSocket: z.string().optional(),
      maxSandboxes: z.number().int().positive().optional(),
      local: z.boolean().optional(),
    })])).min(1).optional(),
    /** How often the hosts are probed, in ms (default 2000). */
    probeMs: z.number().int().min(0).optional(),
    /** Image (default clawgym-sandbox:<recipe>-node<version>, from scripts/docker-image.sh). */
    image: z.string().optional(),
    /** Numeric uid[:gid] inside (default 1000:1000). */
    user: z.string().regex(/^\d+(:\d+)?$/).optional(),
    /** Started containers kept ready per kind of sandbox (default 2; 0: none). */
    warmPool: z.number().int().min(0).optional(),
    /** Remove unused spares after this many ms (default 30000). */
    warmIdleMs: z.number().int().positive().optional(),
    /** Process limit when a rollout sets none (default 1024). */
    defaultPids: z.number().int().positive().optional(),
    /** What one sandbox may write (default '1g'; a number is MiB; false or 0: no limit). */
    diskLimit: z.union([z.string().min(1), z.number().min(0), z.literal(false)]).optional(),
  }),
  apply(api, options) {
    api.provide.sandbox(new DockerSandboxProvider(options));
  },
});
