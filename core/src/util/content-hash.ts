import { createHash } from 'node:crypto';
import { open, readdir, readFile, readlink, lstat } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Files larger than this are hashed by their size, first and last MiB (model weights of gigabytes). */
const WHOLE_FILE_LIMIT = 64 * 1024 * 1024;
const EDGE = 1024 * 1024;

const sha256 = () => createHash('sha256');

/**
 * sha256 of a file's content (hex). A file over 64 MiB is hashed by its size and its first and
 * last MiB instead, so a lock over a model folder of gigabytes takes milliseconds; a rebuilt
 * weight file differs in its header or tail in practice.
 */
export async function hashFile(path: string): Promise<string> {
  const info = await lstat(path);
  if (info.size <= WHOLE_FILE_LIMIT) return sha256().update(await readFile(path)).digest('hex');
  const h = sha256().update(`sampled ${info.size}\n`);
  const handle = await open(path, 'r');
  try {
    for (const at of [0, info.size - EDGE]) {
      const buf = Buffer.alloc(EDGE);
      const { bytesRead } = await handle.read(buf, 0, EDGE, at);
      h.update(buf.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return h.digest('hex');
}

/** Every entry under `root` (files, links, folders), sorted by path, relative to it. */
async function walk(root: string, dir = root, out: string[] = []): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    // A folder this user may not read (root-owned parts of a root filesystem) counts by name only.
    if (err.code === 'EACCES') return [];
    throw err;
  });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, e.name);
    out.push(relative(root, path));
    if (e.isDirectory()) await walk(root, path, out);
  }
  return out;
}

/** One line per entry: its kind, whether it is executable, and its content's (or link target's) hash. */
async function entryLine(root: string, rel: string): Promise<string> {
  const path = join(root, rel);
  const info = await lstat(path);
  const exec = info.mode & 0o111 ? 'x' : '-';
  if (info.isSymbolicLink()) return `l ${rel} -> ${await readlink(path)}`;
  if (info.isDirectory()) return `d ${rel}`;
  if (!info.isFile()) return `o ${rel}`;
  const content = await hashFile(path).catch((err: NodeJS.ErrnoException) => (err.code === 'EACCES' ? `unreadable ${info.size}` : Promise.reject(err)));
  return `f${exec} ${rel} ${content}`;
}

/**
 * sha256 over a file or a folder's whole tree: every entry's path, kind, executable bit and
 * content (a link by its target). Modification times and owners are left out, so the same
 * content copied or rebuilt identically hashes the same.
 */
export async function hashTree(path: string): Promise<string> {
  const info = await lstat(path);
  if (!info.isDirectory()) return hashFile(path);
  const h = sha256();
  for (const rel of await walk(path)) h.update(`${await entryLine(path, rel)}\n`);
  return h.digest('hex');
}

/**
 * A file's hash, or each file's in a folder (relative path → sha256), for lock entries that name
 * what changed: a folder of more than `maxFiles` files is one hash of its tree under `*`.
 */
export async function hashFiles(path: string, maxFiles = 200): Promise<Record<string, string>> {
  const info = await lstat(path);
  if (!info.isDirectory()) return { '.': await hashFile(path) };
  const files: string[] = [];
  for (const rel of await walk(path)) {
    if ((await lstat(join(path, rel))).isDirectory()) continue;
    files.push(rel);
    if (files.length > maxFiles) return { '*': await hashTree(path) };
  }
  const out: Record<string, string> = {};
  for (const rel of files) out[rel] = (await entryLine(path, rel)).split(' ').pop()!;
  return out;
}
