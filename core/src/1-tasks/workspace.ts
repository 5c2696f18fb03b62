import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { Workspace } from '../contracts/task';
import { ClawGymError, ErrorCodes } from '../errors';

const WHAT: Record<string, string> = {
  EISDIR: 'is a folder, not a file', ENOENT: 'does not exist', ENOTDIR: 'is a file, not a folder (or under one)',
};

/**
 * A path the agent left missing or as something else than the verifier reads it as: the agent's
 * doing (the rollout scores 0), never the verifier's bug. Other errors (EACCES, EIO) are kept.
 */
function unreadable(path: string, err: unknown): unknown {
  const what = WHAT[(err as { code?: string }).code ?? ''];
  return what ? new ClawGymError(ErrorCodes.WORKSPACE_UNREADABLE, `${path} ${what} in the workspace`, { cause: err }) : err;
}

/**
 * A {@link Workspace} over a host folder. Paths are relative to the root; a path that escapes
 * it (`../x`, `/etc/x`) is refused, so a task's setup or verifier cannot touch the host.
 */
export function fsWorkspace(root: string): Workspace {
  const abs = resolve(root);
  const at = (p: string) => {
    const full = resolve(abs, p);
    const rel = relative(abs, full);
    if (rel.startsWith('..') || isAbsolute(rel)) throw new ClawGymError(ErrorCodes.WORKSPACE_PATH_ESCAPE, `path escapes the workspace: ${p}`, { hint: 'Task setup and verifiers use paths relative to the workspace root.' });
    return full;
  };
  return {
    root: abs,
    readFile: (p) => readFile(at(p)).catch((err: unknown) => { throw unreadable(p, err); }),
    async writeFile(p, data) {
      const full = at(p);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, data);
    },
    exists: async (p) => existsSync(at(p)),
    list: async (dir = '.') => (await readdir(at(dir)).catch((err: unknown) => { throw unreadable(dir, err); })).sort(),
  };
}
