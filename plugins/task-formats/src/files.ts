import { existsSync } from 'node:fs';
import { chmod, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Workspace } from '@clawgym/core';

/** Every file under `dir` (relative paths, sorted), skipping names `skip` says to. */
export async function filesUnder(dir: string, skip: (rel: string) => boolean = () => false): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const rel = relative(dir, join(d, e.name));
      if (skip(rel)) continue;
      if (e.isDirectory()) await walk(join(d, e.name));
      else if (e.isFile()) out.push(rel);
    }
  };
  if (existsSync(dir)) await walk(dir);
  return out.sort();
}

/** Copy files of a host folder into a workspace (under its folder `under`); executable files stay executable. */
export async function copyToWorkspace(dir: string, files: string[], ws: Workspace, under = ''): Promise<void> {
  for (const f of files) {
    const to = under ? join(under, f) : f;
    await ws.writeFile(to, await readFile(join(dir, f)));
    const { mode } = await stat(join(dir, f));
    if (mode & 0o111) await chmod(join(ws.root, to), 0o755);
  }
}

/** Is `p` a folder? */
export const isDir = async (p: string) => existsSync(p) && (await stat(p)).isDirectory();

/** Sub-folders of `dir` (not hidden), sorted; a link to a folder counts (a split made of links to tasks). */
export const subdirs = async (dir: string) => {
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.name.startsWith('.'));
  const dirs = await Promise.all(entries.map(async (e) => e.isDirectory() || (e.isSymbolicLink() && await isDir(join(dir, e.name)))));
  return entries.filter((_, i) => dirs[i]).map((e) => e.name).sort();
};
