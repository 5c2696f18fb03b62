import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The nearest `node_modules` above this module that holds `@clawgym/core` (a project's, or this repository's). */
function nodeModules(): string {
  for (let d = __dirname; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules', '@clawgym', 'core'))) return join(d, 'node_modules');
    if (dirname(d) === d) throw new Error(`no node_modules with @clawgym/core above ${__dirname}`);
  }
}

/**
 * A throwaway project folder, as a user's would be, for tests that run the `clawgym` CLI: the
 * installed `node_modules` linked in (so configs import `@clawgym/core` and plugins resolve), a
 * `package.json`, and `files` (name → text), e.g. `{ 'clawgym.config.mjs': '...' }`. Every
 * folder made is removed by `removeTempProjects()` (call it in `afterAll`).
 */
export function tempProject(files: Record<string, string>, prefix = 'clawgym-project-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  symlinkSync(nodeModules(), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"name":"clawgym-test-project","private":true}');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const made: string[] = [];

/** Remove every folder `tempProject` made in this test file. */
export function removeTempProjects(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}
