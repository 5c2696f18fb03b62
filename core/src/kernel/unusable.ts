import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';

/** node_modules folders Node would search from `fromDir`, nearest first. */
export function nodeModulesDirs(fromDir: string): string[] {
  const dirs: string[] = [];
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const nm = join(dir, 'node_modules');
    if (existsSync(nm)) dirs.push(nm);
    if (dirname(dir) === dir) return dirs;
  }
}

/** The folder of an installed package `name` as Node would find it from `fromDir` (its package.json is there), if any. */
export function installedPackageDir(name: string, fromDir: string): string | undefined {
  if (name.startsWith('.') || name.startsWith('/')) return undefined;
  return nodeModulesDirs(fromDir).map((nm) => join(nm, name)).find((dir) => existsSync(join(dir, 'package.json')));
}

/**
 * Why an installed package's entry does not load: its `main` (or `exports["."]`) names a file
 * that is not there — typically `dist/`, left out of a tarball or never built.
 */
export function whyUnusable(dir: string): string {
  let pkg: { main?: string; exports?: unknown };
  try {
    pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as typeof pkg;
  } catch {
    return 'its package.json is not valid JSON';
  }
  const exported = typeof pkg.exports === 'string' ? pkg.exports : entryOfExports(pkg.exports);
  const entry = exported ?? pkg.main ?? 'index.js';
  const field = exported ? 'exports' : pkg.main ? 'main' : 'default entry';
  return existsSync(join(dir, entry)) ? `its ${field} "${entry}" does not load` : `its ${field} "${entry}" does not exist`;
}

function entryOfExports(exports: unknown): string | undefined {
  const dot = exports && typeof exports === 'object' ? (exports as Record<string, unknown>)['.'] ?? exports : undefined;
  if (typeof dot === 'string') return dot;
  if (!dot || typeof dot !== 'object') return undefined;
  const conditions = dot as Record<string, unknown>;
  const first = conditions.require ?? conditions.node ?? conditions.default ?? conditions.import;
  return typeof first === 'string' ? first : entryOfExports({ '.': first });
}

const versionOf = (dir: string): string | undefined => {
  try { return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version; } catch { return undefined; }
};

/** An installed package that ClawGym found but cannot load: named as such, never "cannot find". */
export function unusablePackage(name: string, dir: string): ClawGymError {
  const version = versionOf(dir);
  return new ClawGymError(
    ErrorCodes.PLUGIN_INVALID,
    `the plugin package ${name}${version ? `@${version}` : ''} is installed (${dir}) but exports nothing usable: ${whyUnusable(dir)}`,
    { hint: 'It was packed or linked without its build: build it (npm run build in the package) and install it again, or install a released version that ships its dist/.' },
  );
}
