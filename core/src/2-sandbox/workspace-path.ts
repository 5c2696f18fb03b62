/**
 * A workspace path a task asks for (`SandboxSpec.workspacePath`): checked the same way by every
 * provider, so a task that one sandbox accepts is not refused, or placed over a system folder,
 * by another.
 */
import { posix } from 'node:path';
import type { SandboxSpec } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';

/**
 * Folders a workspace may not be at or under: the system the sandbox runs (bound read-only, or
 * the image's), the kernel's file systems, and the places providers put their own things.
 */
const RESERVED = ['/bin', '/boot', '/dev', '/etc', '/lib', '/lib32', '/lib64', '/libx32', '/proc', '/run', '/sbin', '/sys', '/usr', '/var', '/opt/clawgym', '/tmp'];

/** `path` when a workspace may be placed there; otherwise a SANDBOX_SPEC_INVALID error saying why. */
export function checkWorkspacePath(path: string, home: string): string {
  const bad = (why: string) => new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, `workspacePath ${JSON.stringify(path)} ${why}`, {
    hint: 'ask for an absolute path of its own, such as /app or /root/.openclaw/workspace',
  });
  if (!posix.isAbsolute(path)) throw bad('is not absolute');
  if (posix.normalize(path) !== path || (path.endsWith('/') && path !== '/')) throw bad(`is not normalised (${posix.normalize(path).replace(/(.)\/$/, '$1')})`);
  if (path === '/') throw bad('is the root folder');
  const under = (dir: string) => path === dir || path.startsWith(`${dir}/`);
  const reserved = RESERVED.find(under);
  if (reserved) throw bad(`lies in ${reserved}, which the sandbox's system or the provider uses`);
  if (under(home) || home.startsWith(`${path}/`)) throw bad(`overlaps the sandbox's HOME (${home})`);
  return path;
}

/** Providers that cannot place a workspace at an arbitrary path refuse a spec that asks for one. */
export function refuseWorkspacePath(spec: SandboxSpec, provider: string, why: string): void {
  if (spec.workspacePath === undefined) return;
  throw new ClawGymError(ErrorCodes.SANDBOX_UNSUPPORTED, `the "${provider}" sandbox cannot place the workspace at ${spec.workspacePath}, as the task asks: ${why}`, {
    hint: 'use the local sandbox with bubblewrap (apt-get install bubblewrap) or the Docker sandbox (@clawgym/sandbox-docker)',
  });
}
