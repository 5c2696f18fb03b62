import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ClawGymError } from '../errors';
import { readPluginPackage, type PluginPackage } from './resolve';
import { nodeModulesDirs, unusablePackage } from './unusable';

const isPluginPackageName = (name: string) =>
  /^clawgym-plugin-/.test(name) || /^@[^/]+\/clawgym-plugin-/.test(name) || (/^@clawgym\//.test(name) && name !== '@clawgym/core');

/** An installed plugin package whose entry does not load (no `dist/`): listed with why, never left out. */
export interface UnusablePackage {
  packageName: string;
  version?: string;
  dir: string;
  error: ClawGymError;
}

const hasPluginKeyword = (dir: string): boolean => {
  try {
    return ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { keywords?: unknown }).keywords as unknown[] | undefined)?.includes('clawgym-plugin') === true;
  } catch {
    return false;
  }
};

/**
 * Every installed ClawGym plugin package visible from `fromDir` — names `@clawgym/*` (but core),
 * `clawgym-plugin-*` or `@scope/clawgym-plugin-*`, with the `clawgym-plugin` keyword — and,
 * apart, those among them whose entry does not load. Nearer node_modules win over farther ones,
 * as in Node's own resolution.
 */
export function discoverInstalled(fromDir: string): { packages: PluginPackage[]; unusable: UnusablePackage[] } {
  const found = new Map<string, PluginPackage>();
  const unusable = new Map<string, UnusablePackage>();
  for (const nm of nodeModulesDirs(fromDir)) {
    const names = readdirSync(nm).flatMap((entry) =>
      entry.startsWith('@') ? readdirSync(join(nm, entry)).map((sub) => `${entry}/${sub}`) : [entry],
    );
    for (const name of names) {
      if (!isPluginPackageName(name) || found.has(name) || unusable.has(name)) continue;
      const dir = join(nm, name);
      if (!existsSync(join(dir, 'package.json')) || !hasPluginKeyword(dir)) continue;
      let entry: string;
      try {
        entry = createRequire(join(dir, 'package.json')).resolve(dir);
      } catch {
        const error = unusablePackage(name, dir);
        unusable.set(name, { packageName: name, dir, error, ...readVersion(dir) });
        continue;
      }
      found.set(name, readPluginPackage(dir, entry));
    }
  }
  const byName = <T extends { packageName: string }>(a: T, b: T) => a.packageName.localeCompare(b.packageName);
  return { packages: [...found.values()].sort(byName), unusable: [...unusable.values()].sort(byName) };
}

const readVersion = (dir: string): { version?: string } => {
  const v = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
  return v ? { version: v } : {};
};

/** Every loadable installed ClawGym plugin package visible from `fromDir` (see {@link discoverInstalled}). */
export function discoverPluginPackages(fromDir: string): PluginPackage[] {
  return discoverInstalled(fromDir).packages;
}
