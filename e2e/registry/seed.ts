import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fetchAgain } from './verdaccio';

interface LockEntry {
  version?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface Spec { name: string; version: string; optional: boolean; integrity?: string }

/**
 * The third-party packages that workspace packages (`core`, `plugins/x`) and packages of the
 * root's node_modules (`node_modules/typescript`) need, as the repository's lockfile resolved
 * them: dependencies, optional dependencies and required peers, transitively (npm's nested
 * node_modules lookup), without the workspace's own packages.
 */
export function lockClosure(repo: string, roots: string[]): Spec[] {
  const lock = (JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;
  const find = (name: string, from: string): string | undefined => {
    for (let dir = from; ;) {
      const key = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (lock[key]) return key;
      if (!dir) return undefined;
      const i = dir.lastIndexOf('/node_modules/');
      dir = i < 0 ? '' : dir.slice(0, i);
    }
  };
  const seen = new Map<string, Spec>();
  const visit = (key: string, optional: boolean) => {
    const e = lock[key]!;
    const peers = Object.keys(e.peerDependencies ?? {}).filter((n) => !e.peerDependenciesMeta?.[n]?.optional);
    const deps = [...Object.keys(e.dependencies ?? {}).map((n) => [n, optional] as const), ...Object.keys(e.optionalDependencies ?? {}).map((n) => [n, true] as const), ...peers.map((n) => [n, optional] as const)];
    for (const [name, opt] of deps) {
      const at = find(name, key);
      if (!at) {
        if (opt) continue;
        throw new Error(`the lockfile has no ${name} for ${key}`);
      }
      const t = lock[at]!;
      if (t.link) continue;
      const id = `${name}@${t.version}`;
      const known = seen.get(id);
      if (known && (known.optional <= opt)) continue;
      seen.set(id, { name, version: t.version!, optional: opt, ...(t.integrity ? { integrity: t.integrity } : {}) });
      visit(at, opt);
    }
  };
  for (const root of roots) {
    // A package of node_modules is needed itself; a workspace only for what it depends on.
    const e = lock[root];
    if (!e) throw new Error(`the lockfile has no ${root}`);
    if (root.startsWith('node_modules/')) {
      const name = root.slice('node_modules/'.length);
      seen.set(`${name}@${e.version}`, { name, version: e.version!, optional: false, ...(e.integrity ? { integrity: e.integrity } : {}) });
    }
    visit(root, false);
  }
  return [...seen.values()];
}

/** The package.json inside a tarball (the first `<folder>/package.json` entry). */
function manifestOf(tgz: Buffer): Record<string, unknown> {
  const tar = gunzipSync(tgz);
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    const path = prefix ? `${prefix}/${name}` : name;
    if (/^[^/]+\/package\.json$/.test(path)) return JSON.parse(tar.subarray(at + 512, at + 512 + size).toString('utf8')) as Record<string, unknown>;
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error('no package.json in the tarball');
}

/** The tarball npm's cache holds for an integrity (`sha512-…`), if it holds it. */
function cached(cache: string, integrity: string | undefined): string | undefined {
  const m = /^(sha\d+)-(.+)$/.exec(integrity?.split(' ')[0] ?? '');
  if (!m) return undefined;
  const hex = Buffer.from(m[2]!, 'base64').toString('hex');
  const file = join(cache, '_cacache', 'content-v2', m[1]!, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return existsSync(file) ? file : undefined;
}

/**
 * Each spec's tarball as npm fetched it: from npm's cache by the lockfile's integrity (the
 * repository's install put it there), else with `npm pack name@version` into `dir` (from the
 * public registry). Optional specs the cache lacks (other platforms' binaries, which the
 * repository's install left out) are left out. Returns the tarball files.
 */
export function tarballsOf(specs: Spec[], dir: string, env: NodeJS.ProcessEnv): string[] {
  const cache = execFileSync('npm', ['config', 'get', 'cache'], { env, encoding: 'utf8' }).trim();
  const files: string[] = [];
  const missing: Spec[] = [];
  for (const spec of specs) {
    const file = cached(cache, spec.integrity);
    if (file) files.push(file);
    // An optional package the install left out (another platform's binary) is left out here too.
    else if (!spec.optional) missing.push(spec);
  }
  const pack = (list: Spec[]): void => {
    if (!list.length) return;
    try {
      const json = execFileSync('npm', ['pack', '--prefer-offline', '--json', '--pack-destination', dir, ...list.map((s) => `${s.name}@${s.version}`)],
        { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, timeout: 300_000 });
      for (const p of JSON.parse(json) as { filename: string }[]) files.push(join(dir, p.filename));
    } catch (err) {
      if (list.length === 1) {
        if (list[0]!.optional) return;
        throw err;
      }
      const half = Math.ceil(list.length / 2);
      pack(list.slice(0, half));
      pack(list.slice(half));
    }
  };
  pack(missing);
  return [...new Set(files)];
}

/**
 * Publish a third-party tarball to the registry as `npm publish` would (a PUT of the package
 * document with the tarball attached), without npm: a package's own publishConfig could
 * otherwise send it elsewhere.
 */
export async function publishTarball(url: string, token: string, file: string): Promise<void> {
  const tgz = readFileSync(file);
  const manifest = manifestOf(tgz);
  const name = manifest.name as string;
  const version = manifest.version as string;
  const base = name.replace(/^@[^/]+\//, '');
  const filename = `${base}-${version}.tgz`;
  const doc = {
    _id: name, name, 'dist-tags': { latest: version },
    versions: {
      [version]: {
        ...manifest, _id: `${name}@${version}`,
        dist: { shasum: createHash('sha1').update(tgz).digest('hex'), integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`, tarball: `${url}/${name}/-/${filename}` },
      },
    },
    _attachments: { [filename]: { content_type: 'application/octet-stream', data: tgz.toString('base64'), length: tgz.length } },
  };
  const res = await fetchAgain(`${url}/${name.replace('/', '%2f')}`, {
    method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(doc),
  });
  // 409: already there, from an earlier try whose answer was lost with its connection (fetchAgain).
  if (!res.ok && res.status !== 409) throw new Error(`publishing ${name}@${version} to ${url}: HTTP ${res.status} ${await res.text()}`);
}
