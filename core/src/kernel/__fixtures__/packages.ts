import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** An empty project folder (removed by {@link removeProjects}). */
export function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-pkgs-'));
  made.push(dir);
  return dir;
}

export function removeProjects(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Write an installed package under `root/node_modules/name`: its package.json (with `extra`) and, unless `index` is null, its entry. */
export function installPackage(root: string, name: string, index: string | null, extra: Record<string, unknown> = {}): string {
  const dir = join(root, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js', keywords: ['clawgym-plugin'], ...extra }));
  if (index !== null) writeFileSync(join(dir, 'index.js'), index);
  return dir;
}

/** The source of a plugin package providing one task suite `suite`, under the plugin name `plugin`; its verifier runs `verify`. */
export const suitePlugin = (plugin: string, suite: string, verify = 'return { reward: 0, pass: false, details: "" };') => `module.exports = () => ({ name: ${JSON.stringify(plugin)}, apply(api) {
  api.provide.taskSuite({ name: ${JSON.stringify(suite)}, async tasks(split) {
    return [{ id: split + '-1', category: 'demo', instruction: 'x', async setup() {}, async verify(ws) { ${verify} } }];
  } });
} });`;
