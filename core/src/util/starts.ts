import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Count one more start of whatever writes into `dir` (an evaluation, a `serve`), in
 * `<dir>/<file>`, and return it (1 on the first). Written by rename before anything else
 * runs, so a process killed right after still leaves its start counted, and the next one
 * picks ids no earlier start used.
 */
export async function countStart(dir: string, file: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, file);
  const before = Number((await readFile(path, 'utf8').catch(() => '0')).trim()) || 0;
  await writeFile(`${path}.tmp`, `${before + 1}\n`);
  await rename(`${path}.tmp`, path);
  return before + 1;
}
