import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';

/**
 * What each published package declares against what it ships (the build in dist/, as `npm test`
 * makes it first): every bare module its JavaScript requires is a dependency, peer or optional
 * dependency of that package (installing it alone from a registry brings it), and every file its
 * package.json points at is in the tarball. e2e/registry.e2e.test.ts installs them from a real
 * registry; there a dependency declared by one package hides another's missing one, here it does not.
 */
const repo = resolve(__dirname, '..');
const workspaces = ['core', 'create-clawgym', ...readdirSync(join(repo, 'plugins')).map((d) => `plugins/${d}`)];

interface Pkg {
  name: string; repository?: { directory?: string }; publishConfig?: { access?: string }; main?: string; types?: string; bin?: Record<string, string>;
  exports?: Record<string, string | { types: string; default: string }>;
  dependencies?: Record<string, string>; peerDependencies?: Record<string, string>; optionalDependencies?: Record<string, string>;
}

/** The files `npm pack` would put in the tarball. */
function packed(dir: string): string[] {
  const [info] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as { files: { path: string }[] }[];
  return info!.files.map((f) => f.path);
}

/** Bare module names required or imported by the JavaScript files among `files`. */
function requires(dir: string, files: string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/(?:\brequire\(|\bimport\()\s*["'`]([^"'`$]+)["'`]\s*\)/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      if (!found.has(name)) found.set(name, file);
    }
  }
  return found;
}

describe.each(workspaces)('the package in %s', (dir) => {
  const at = join(repo, dir);
  const pkg = JSON.parse(readFileSync(join(at, 'package.json'), 'utf8')) as Pkg;
  const files = packed(at);

  it('declares every module its shipped JavaScript requires', () => {
    const declared = new Set([pkg.name, ...Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies })]);
    const undeclared = [...requires(at, files)].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(undeclared).toEqual([]);
  });

  it('ships every file its package.json points at, and no tests or build info', () => {
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.bin ?? {}), ...Object.values(pkg.exports ?? {}).flatMap((e) => (typeof e === 'string' ? [e] : [e.types, e.default]))]
      .filter((f): f is string => !!f).map((f) => f.replace(/^\.\//, ''));
    expect(targets.filter((f) => !files.includes(f))).toEqual([]);
    expect(files.filter((f) => /\.test\.|__fixtures__|\.tsbuildinfo$/.test(f))).toEqual([]);
  });

  it('says where it comes from and how it is published, with an exports map (a package added later included)', () => {
    expect(pkg.repository?.directory).toBe(dir);
    expect(pkg.publishConfig?.access).toBe('public');
    expect(Object.keys(pkg.exports ?? {})).toEqual(expect.arrayContaining(['.', './package.json']));
  });
});

it('every harness plugin of an npm CLI names that package (cliPackage), so a run without `bin` locks its version and integrity', () => {
  const { REAL_HARNESSES } = require(join(repo, 'core', 'dist', 'testing', 'harnesses.js')) as { REAL_HARNESSES: string[] };
  const missing = REAL_HARNESSES.filter((name) => {
    const mod = require(join(repo, 'plugins', `harness-${name}`, 'dist', 'index.js')) as Record<string, unknown>;
    const harness = Object.values(mod).find((v) => v && typeof v === 'object' && (v as { name?: string }).name === name) as { cliPackage?: string } | undefined;
    return typeof harness?.cliPackage !== 'string';
  });
  expect(missing).toEqual([]);
});

it('@clawgym/engine-embedded ships the cold start its config names', () => {
  const files = packed(join(repo, 'plugins', 'engine-embedded'));
  expect(files).toEqual(expect.arrayContaining(['checkpoints/cold-start/config.json', 'checkpoints/cold-start/model.safetensors']));
});

it('the release command publishes only to a registry it is given', () => {
  const r = spawnSync(process.execPath, [join(repo, 'scripts', 'release.js'), '0.2.0'], { cwd: repo, encoding: 'utf8' });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('error: name the registry to publish to: --registry <url>');
  expect((JSON.parse(readFileSync(join(repo, 'core', 'package.json'), 'utf8')) as Pkg & { version: string }).version).not.toBe('0.2.0');
});
