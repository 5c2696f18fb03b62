import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';

/**
 * Copilot CLI's native binary carries its JavaScript packed: on first start it unpacks ~235 MB
 * into `$COPILOT_CACHE_HOME/pkg/<platform>/<version>/` (57 s on two busy cores) and marks the
 * folder `.extraction-complete`. Unpacked once on the host and bound read-only into every
 * sandbox, the cache is read, never written, by the rollouts (1.0.102 runs from a read-only one;
 * from a read-only empty one it fails on `mkdir pkg`).
 */

/** The shared cache beside an installed CLI: `<prefix>/node_modules/.cache/copilot`, or none for a bare command name. */
export function defaultCacheDir(bin: string): string | undefined {
  if (!bin.startsWith(sep)) return undefined;
  const i = bin.indexOf(`${sep}node_modules${sep}`);
  return i > 0 ? join(bin.slice(0, i), 'node_modules', '.cache', 'copilot') : undefined;
}

/** Whether `cacheDir` holds a completely unpacked package (any platform and version). */
export function cacheIsWarm(cacheDir: string): boolean {
  const pkg = join(cacheDir, 'pkg');
  if (!existsSync(pkg)) return false;
  for (const platform of readdirSync(pkg)) {
    let versions: string[];
    try { versions = readdirSync(join(pkg, platform)); } catch { continue; }
    if (versions.some((v) => existsSync(join(pkg, platform, v, '.extraction-complete')))) return true;
  }
  return false;
}

const warming = new Map<string, Promise<boolean>>();

/**
 * Unpack the CLI's package into `cacheDir` on the host (its `--version` does that and nothing
 * else), once per process for each binary and cache; resolves whether the cache is warm after.
 * A binary that is not on this host (it lives in a container image) leaves the cache as it is.
 */
export function warmCache(bin: string, cacheDir: string): Promise<boolean> {
  const key = `${bin}\0${cacheDir}`;
  let p = warming.get(key);
  if (!p) {
    p = existsSync(bin) ? unpack(bin, cacheDir) : Promise.resolve(cacheIsWarm(cacheDir));
    warming.set(key, p);
  }
  return p;
}

async function unpack(bin: string, cacheDir: string): Promise<boolean> {
  const home = await mkdtemp(join(tmpdir(), 'clawgym-copilot-warm-'));
  try {
    await new Promise<void>((resolve) => {
      execFile(bin, ['--version'], {
        timeout: 300_000,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, COPILOT_CACHE_HOME: cacheDir, COPILOT_AUTO_UPDATE: 'false' },
      }, () => resolve());
    });
    return cacheIsWarm(cacheDir);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
