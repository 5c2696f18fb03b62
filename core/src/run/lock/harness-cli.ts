import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Harness } from '../../contracts/harness';
import type { LockedCli, LockedHarness } from '../../contracts/lock';
import { onPath } from '../../util/which';

/** The folder of the npm package holding `file`: the nearest folder above it with a named package.json inside node_modules. */
function packageDirOf(file: string): string | undefined {
  for (let d = dirname(file); dirname(d) !== d; d = dirname(d)) {
    const manifest = join(d, 'package.json');
    if (!d.includes(`${sep}node_modules${sep}`) || !existsSync(manifest)) continue;
    try {
      if (typeof JSON.parse(readFileSync(manifest, 'utf8')).name === 'string') return d;
    } catch { /* not a package's manifest */ }
  }
  return undefined;
}

/** The integrity npm recorded for the package at `dir`, from the lock file of the install it belongs to. */
function integrityOf(dir: string): string | undefined {
  const at = dir.indexOf(`${sep}node_modules${sep}`);
  const root = dir.slice(0, at);
  const key = relative(root, dir).split(sep).join('/');
  for (const file of [join(root, 'package-lock.json'), join(root, 'node_modules', '.package-lock.json')]) {
    try {
      const entry = (JSON.parse(readFileSync(file, 'utf8')) as { packages?: Record<string, { integrity?: string }> }).packages?.[key];
      if (entry?.integrity) return entry.integrity;
    } catch { /* no such lock file, or not npm's */ }
  }
  return undefined;
}

/** What npm installed at `dir`: the package's name and version, its integrity, its manifest's hash. */
export function installedPackage(dir: string): LockedCli {
  const text = readFileSync(join(dir, 'package.json'), 'utf8');
  const manifest = JSON.parse(text) as { name: string; version?: string };
  const integrity = integrityOf(dir);
  return { package: manifest.name, version: manifest.version ?? 'unknown', ...(integrity ? { integrity } : {}), manifest: createHash('sha256').update(text).digest('hex') };
}

/**
 * Where the harness's CLI is installed: the slot's `bin` (a path, or a name found on PATH),
 * followed through links to the package holding it; else the harness's `cliPackage` as the
 * project resolves it.
 */
function cliPackageDir(harness: Harness, options: Record<string, unknown>, rootDir: string): string | undefined {
  const bin = typeof options.bin === 'string' && options.bin !== '' ? options.bin : undefined;
  if (bin) {
    const found = bin.includes('/') ? resolve(rootDir, bin) : onPath(bin);
    if (!found || !existsSync(found)) return undefined;
    return packageDirOf(realpathSync(found));
  }
  if (!harness.cliPackage) return undefined;
  try {
    return dirname(require.resolve(`${harness.cliPackage}/package.json`, { paths: [rootDir] }));
  } catch {
    return undefined;
  }
}

/**
 * The CLI part of a harness's lock entry: its npm package, version and integrity where it is a
 * package; else its `--version`, where it has one.
 */
export async function lockedCli(harness: Harness, options: Record<string, unknown>, rootDir: string): Promise<Pick<LockedHarness, 'cli' | 'version'>> {
  const dir = cliPackageDir(harness, options, rootDir);
  if (dir) return { cli: installedPackage(dir) };
  if (!harness.cliPackage && typeof options.bin !== 'string') return {};
  const version = await harness.version?.(options).catch(() => undefined);
  return version ? { version } : {};
}
