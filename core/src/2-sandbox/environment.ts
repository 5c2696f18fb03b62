import type { SandboxSpec } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';

/**
 * Providers that run no images (local, netns) refuse a spec that carries a task's image: the
 * setup in its Dockerfile would silently never happen, and a verifier could pass or fail for
 * the wrong reason. The runner refuses such tasks before the first rollout; this is the same
 * rule for code that creates sandboxes directly.
 */
export function refuseEnvironment(spec: SandboxSpec, provider: string): void {
  if (!spec.environment) return;
  throw new ClawGymError(ErrorCodes.SANDBOX_UNSUPPORTED,
    `the "${provider}" sandbox cannot run ${spec.environment.source}: the task needs its own image (${spec.environment.dockerfile ?? 'Dockerfile'} in ${spec.environment.contextDir})`,
    { hint: "use the Docker sandbox (sandbox: 'docker', @clawgym/sandbox-docker)" });
}
