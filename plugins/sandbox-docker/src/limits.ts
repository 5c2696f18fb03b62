/**
 * How Docker sandboxes' limits are enforced: the engine puts each container in cgroups (pids,
 * memory with no swap beyond it, a CFS quota for cpus) and the provider kills the container at
 * the wall-clock limit. Known two ways: from the kernel's cgroup controllers, without asking
 * the engine (what a test file decides with when it loads: an engine on this machine runs as
 * root and uses what the kernel has), and from a running engine's own account (`docker info`).
 */
import { kernelControllers, type Controller, type LimitEnforcement } from '@clawgym/core';
import type Docker from 'dockerode';

const WALL = 'timer: the container is killed';

const KERNEL: Record<keyof Omit<LimitEnforcement, 'wall' | 'disk'>, { controller: Controller; how: string }> = {
  pids: { controller: 'pids', how: 'cgroup pids limit (PidsLimit)' },
  memory: { controller: 'memory', how: 'cgroup memory limit, no swap beyond it (Memory, MemorySwap)' },
  cpus: { controller: 'cpu', how: 'cgroup CFS quota (NanoCpus)' },
};

/** How an engine on this machine would enforce each limit, from the kernel's controllers. */
export function limitEnforcementHere(controllers: Record<Controller, boolean> = kernelControllers()): LimitEnforcement {
  const of = (l: keyof typeof KERNEL) => controllers[KERNEL[l].controller] ? KERNEL[l].how : `not enforced: the kernel has no ${KERNEL[l].controller} cgroup controller`;
  return { pids: of('pids'), memory: of('memory'), cpus: of('cpus'), wall: WALL };
}

/** How a running engine enforces each limit, by its own account (`docker info`'s MemoryLimit, CpuCfsQuota, PidsLimit). */
export async function engineLimitEnforcement(docker: Docker): Promise<LimitEnforcement> {
  const info = await docker.info() as { MemoryLimit?: boolean; CpuCfsQuota?: boolean; PidsLimit?: boolean };
  const of = (l: keyof typeof KERNEL, ok: boolean | undefined, field: string) => ok ? KERNEL[l].how : `not enforced: the engine reports ${field}: ${String(ok)}`;
  return { pids: of('pids', info.PidsLimit, 'PidsLimit'), memory: of('memory', info.MemoryLimit, 'MemoryLimit'), cpus: of('cpus', info.CpuCfsQuota, 'CpuCfsQuota'), wall: WALL };
}
