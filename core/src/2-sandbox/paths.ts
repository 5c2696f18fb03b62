/**
 * Sandbox paths to host paths: a sandbox's workspace and HOME are host folders mounted (or, in
 * the fallback, used as they are) inside. One mapping for every provider, with the escape check:
 * a path outside the mounts, a relative path that climbs out of the working folder, or a host
 * path that a symlink (made by a sandboxed process) leads out of the sandbox is refused before
 * the host touches it.
 */
import { constants, existsSync } from 'node:fs';
import { cp, lstat, mkdir, realpath, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative } from 'node:path';
import type { Sandbox } from '../contracts/sandbox';
import { ClawGymError, ErrorCodes } from '../errors';

/** A host folder and where it is seen inside the sandbox. */
export interface Mount {
  inside: string;
  host: string;
}

/** Where a sandbox path lies: its mount, and its components below it. */
export interface Located {
  inside: string;
  mount: Mount;
  parts: string[];
}

/** The mapping of one sandbox (see the file comment). */
export class SandboxPaths {
  private realBases?: Promise<string[]>;

  /** `workdir`: what relative sandbox paths are relative to (the workspace as seen inside). */
  constructor(readonly mounts: readonly Mount[], readonly workdir: string) {}

  /** The mount a sandbox path lies in, or undefined when it is outside every mount. */
  locate(sandboxPath: string): Located | undefined {
    const abs = posix.resolve(this.workdir, sandboxPath);
    for (const mount of this.mounts) {
      if (abs !== mount.inside && !abs.startsWith(`${mount.inside}/`)) continue;
      return { inside: abs, mount, parts: abs.slice(mount.inside.length).split('/').filter(Boolean) };
    }
    return undefined;
  }

  /** The host path of a sandbox path, or undefined when it is outside every mount. */
  hostPathOf(sandboxPath: string): string | undefined {
    const at = this.locate(sandboxPath);
    return at && join(at.mount.host, ...at.parts);
  }

  /** The host path of a sandbox path; `CLAWGYM_WORKSPACE_PATH_ESCAPE` when it is outside every mount. */
  toHost(sandboxPath: string): string {
    const host = this.hostPathOf(sandboxPath);
    if (host !== undefined) return host;
    if (!isAbsolute(sandboxPath)) throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `sandbox path escapes the workspace: ${sandboxPath}`);
    throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `sandbox path ${sandboxPath} is outside the sandbox's ${this.mounts.map((m) => m.inside).join(' and ')}`);
  }

  /**
   * The host path of a sandbox path that the host may use without following any link: every
   * existing component below its mount is a real folder (a link made inside resolves in the
   * sandbox's own filesystem, so from the host it could lead anywhere), and missing folders are
   * made by `makeDir` when given. Undefined outside the mounts, or where a link or a file
   * stands in the way: the caller then works from inside (the Docker sandbox).
   */
  async linkFreeHostPath(sandboxPath: string, makeDir?: (hostDir: string) => Promise<void>): Promise<string | undefined> {
    const at = this.locate(sandboxPath);
    if (!at) return undefined;
    let cur = at.mount.host;
    for (const [i, part] of at.parts.entries()) {
      cur = join(cur, part);
      const last = i === at.parts.length - 1;
      const st = await lstat(cur).catch(() => undefined);
      if (st?.isSymbolicLink()) return undefined;
      if (!st) {
        if (!last && makeDir) await makeDir(cur);
      } else if (!last && !st.isDirectory()) {
        return undefined;
      }
    }
    return cur;
  }

  /** Refuse a host path that symlinks lead out of the mounts (checked on its nearest existing ancestor). */
  async checkReal(hostPath: string): Promise<void> {
    this.realBases ??= Promise.all(this.mounts.map((m) => realpath(m.host)));
    const bases = await this.realBases;
    let p = hostPath;
    while (!existsSync(p)) p = dirname(p);
    const real = await realpath(p);
    const inside = bases.some((b) => { const rel = relative(b, real); return rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel); });
    if (!inside) throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `sandbox path leads outside the sandbox (through a symlink): ${hostPath} -> ${real}`);
  }

  /** Make `hostPath`'s folder (checked before and after) and remove a symlink standing where the file goes. */
  async prepareTarget(hostPath: string): Promise<void> {
    await this.checkReal(dirname(hostPath));
    await mkdir(dirname(hostPath), { recursive: true });
    await this.checkReal(dirname(hostPath));
    const st = await lstat(hostPath).catch(() => undefined);
    if (st?.isSymbolicLink()) await unlink(hostPath);
  }
}

/** A sandbox's file operations done from the host through its mounts (local and netns sandboxes). */
export function hostFiles(paths: SandboxPaths): Pick<Sandbox, 'writeFile' | 'copyIn' | 'copyOut'> {
  return {
    async writeFile(sandboxPath, data) {
      const host = paths.toHost(sandboxPath);
      await paths.prepareTarget(host);
      await writeFile(host, data, { flag: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW });
    },
    async copyIn(hostPath, sandboxPath) {
      const host = paths.toHost(sandboxPath);
      await paths.prepareTarget(host);
      await cp(hostPath, host, { recursive: true });
    },
    async copyOut(sandboxPath, hostPath) {
      const host = paths.toHost(sandboxPath);
      await paths.checkReal(dirname(host));
      await cp(host, hostPath, { recursive: true });
    },
  };
}
