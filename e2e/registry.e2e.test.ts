import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { lockClosure, publishTarball, tarballsOf, type Spec } from './registry/seed';
import { fetchAgain, startVerdaccio, type LocalRegistry } from './registry/verdaccio';

/**
 * ClawGym as a user gets it from a registry: every package published (by the release command) to
 * a Verdaccio of the test's own, with no uplink, so that a package missing a dependency or a file
 * fails here; then, in folders outside the repository and on the machine's own Node (the first
 * `node` on PATH once the repository's folders are taken off it: Debian's 20 here), `npm create
 * clawgym`, `npm install`, `clawgym doctor --fix`, a short `clawgym run` that trains and `clawgym
 * eval`; and `clawgym new plugin` of every kind, tested, published and listed by `clawgym plugins`.
 * The third-party packages they need are published to it too, as the repository's lockfile
 * resolved them (their tarballs from npm's cache).
 */
const repo = resolve(__dirname, '..');
const work = realpathSync(mkdtempSync(join(tmpdir(), 'clawgym-registry-')));
const timings: Record<string, number> = {};
let registry: LocalRegistry;
/** Make a folder (and its parents) and return its path. */
const folder = (path: string) => { mkdirSync(path, { recursive: true }); return path; };

const workspaces = ['core', 'create-clawgym', ...readdirSync(join(repo, 'plugins')).map((d) => `plugins/${d}`)];
const packageNames = workspaces.map((d) => (JSON.parse(readFileSync(join(repo, d, 'package.json'), 'utf8')) as { name: string }).name);
const version = (JSON.parse(readFileSync(join(repo, 'core', 'package.json'), 'utf8')) as { version: string }).version;

/** The environment of a user's shell: no npm_* of the `npm test` that started jest, the repository off PATH. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_|^NODE_OPTIONS$|^NODE_PATH$|^INIT_CWD$/i.test(k)) env[k] = v;
  env.PATH = (process.env.PATH ?? '').split(delimiter).filter((p) => p && !resolve(p).startsWith(repo) && !p.includes('node_modules')).join(delimiter);
  return {
    ...env,
    npm_config_userconfig: registry.npmrc, npm_config_registry: `${registry.url}/`, npm_config_cache: join(work, 'npm-cache'),
    npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', npm_config_yes: 'true', npm_config_loglevel: 'error',
  };
}

/** Run a command as the user would, timed; fail with its output when it fails. */
function sh(label: string, cmd: string, args: string[], cwd: string, o: { env?: NodeJS.ProcessEnv; timeout?: number; allowFail?: boolean } = {}): SpawnSyncReturns<string> {
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd, env: o.env ?? userEnv(), encoding: 'utf8', timeout: o.timeout ?? 300_000, maxBuffer: 64 << 20 });
  timings[label] = (timings[label] ?? 0) + (Date.now() - started) / 1000;
  if (!o.allowFail && r.status !== 0) throw new Error(`${label}: \`${cmd} ${args.join(' ')}\` in ${cwd} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`.slice(-12_000));
  return r;
}

beforeAll(async () => {
  registry = await startVerdaccio(folder(join(work, 'verdaccio')));
}, 90_000);

afterAll(async () => {
  await registry?.stop();
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(`registry e2e timings (s): ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v * 10) / 10])))}\n`);
}, 60_000);

/** Each step needs the one before it: a failure is reported once, where it happened. */
const done = new Set<string>();
const after = (step: string) => { if (!done.has(step)) throw new Error(`skipped: "${step}" did not pass`); };

describe('ClawGym from a registry', () => {
  it('publishes every package with the release command, and what they need from a lockfile-resolved copy of npm', async () => {
    const env = { ...userEnv(), PATH: process.env.PATH };
    const released = sh('release', process.execPath, [join(repo, 'scripts', 'release.js'), '--registry', `${registry.url}/`], repo, { env, timeout: 600_000 });
    expect(released.stdout).toContain(`published ${workspaces.length} packages at ${version} to ${registry.url}/`);
    for (const name of packageNames) {
      const doc = await (await fetchAgain(`${registry.url}/${name.replace('/', '%2f')}`)).json() as { versions?: Record<string, unknown> };
      expect(Object.keys(doc.versions ?? {})).toEqual([version]);
    }
    // The third-party packages: the workspaces' dependencies as locked, a plugin package's build
    // (typescript, @types/node), and the binary package Node 24's own package installs.
    const roots = [...workspaces, 'node_modules/typescript', 'node_modules/@types/node'];
    const nodeVersion = (JSON.parse(readFileSync(join(repo, 'node_modules', 'node', 'package.json'), 'utf8')) as { version: string }).version;
    const specs: Spec[] = [...lockClosure(repo, roots), { name: `node-${process.platform}-${process.arch}`, version: nodeVersion, optional: false }];
    const started = Date.now();
    const tarballs = folder(join(work, 'tarballs'));
    // npm's own cache and the public registry (for what the cache lacks): the repository's npm, not the test's.
    const packed = tarballsOf(specs, tarballs, { ...process.env, npm_config_registry: 'https://registry.npmjs.org/' });
    for (let i = 0; i < packed.length; i += 8) await Promise.all(packed.slice(i, i + 8).map((file) => publishTarball(registry.url, registry.token, file)));
    timings.seed = (Date.now() - started) / 1000;
    process.stdout.write(`published ${packageNames.length} ClawGym packages (${packageNames.join(', ')}) and ${packed.length} third-party tarballs\n`);
    expect(packed.length).toBeGreaterThan(100);
    done.add('published');
  }, 900_000);

  it('installs every package from the registry alone, each loading with every file and dependency it needs', () => {
    after('published');
    const dir = folder(join(work, 'every-package'));
    const deps = Object.fromEntries(packageNames.filter((n) => n !== 'create-clawgym').map((n) => [n, `^${version}`]));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'every-package', private: true, dependencies: deps }));
    // Install scripts off: this checks what the packages declare and ship, not native builds (gl, cpu-features).
    sh('install every package', 'npm', ['install', '--ignore-scripts'], dir, { timeout: 600_000 });
    const loads = packageNames.filter((n) => n !== 'create-clawgym').flatMap((n) => {
      const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', n, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
      return Object.keys(pkg.exports).filter((e) => e !== './package.json').map((e) => `${n}${e.slice(1)}`);
    });
    const script = `for (const m of ${JSON.stringify(loads)}) { try { require(m); } catch (e) { console.log('FAILED ' + m + ': ' + e.message.split('\\n')[0]); } } console.log('loaded ' + ${loads.length});`;
    const loaded = sh('load every package', process.execPath, ['-e', script], dir);
    expect(loaded.stdout.trim()).toBe(`loaded ${loads.length}`);
    expect(existsSync(join(dir, 'node_modules', '@clawgym', 'engine-embedded', 'checkpoints', 'cold-start', 'model.safetensors'))).toBe(true);
    const listed = JSON.parse(sh('plugins of every package', process.execPath, [join(dir, 'node_modules', '@clawgym', 'core', 'bin', 'clawgym.js'), 'plugins', '--json'], dir).stdout) as { packageName: string; error?: string }[];
    expect(listed.filter((r) => r.error)).toEqual([]);
    expect(new Set(listed.map((r) => r.packageName))).toEqual(new Set(packageNames.filter((n) => n !== 'create-clawgym' && n !== '@clawgym/model-hf' && n !== '@clawgym/standins')));
  }, 900_000);

  const project = join(work, 'my-project');
  it('`npm create clawgym` makes a project that installs, passes `clawgym doctor --fix`, trains and evaluates, on the machine\'s Node', () => {
    after('published');
    const node = sh('machine node', 'node', ['--version'], work).stdout.trim();
    process.stdout.write(`the machine's Node: ${node}\n`);
    sh('npm create clawgym', 'npm', ['create', 'clawgym', 'my-project'], work);
    expect(readdirSync(project).sort()).toEqual(['.gitignore', 'README.md', 'clawgym.config.ts', 'package.json']);
    sh('npm install (project)', 'npm', ['install'], project, { timeout: 600_000 });
    const doctor = sh('clawgym doctor --fix', 'npx', ['clawgym', 'doctor', '--fix'], project);
    expect(doctor.stdout).toMatch(/^ok\s+node\s+Node 2[2-9]\./m);
    expect(doctor.stdout).toMatch(/^ok\s+engine embedded\s+from @clawgym\/engine-embedded@/m);
    const run = sh('clawgym run --steps 2', 'npx', ['clawgym', 'run', '--steps', '2'], project, { timeout: 600_000 });
    const pass1 = run.stdout.split('\n').filter((l) => /eval at step \d+: held-out Pass@1/.test(l));
    process.stdout.write(`${pass1.join('\n')}\n`);
    expect(pass1).toEqual([expect.stringMatching(/eval at step 0: held-out Pass@1 \d+\.\d% \(100 tasks\)/), expect.stringMatching(/eval at step 2: held-out Pass@1 \d+\.\d% \(100 tasks\)/)]);
    // It trained: two steps of updates, from the shipped cold start (which passes some held-out tasks).
    const metrics = readFileSync(join(project, 'runs', 'my-project', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; step: number; values: Record<string, number> });
    expect(metrics.filter((m) => m.kind === 'step').map((m) => m.step)).toEqual([1, 2]);
    expect(metrics.find((m) => m.kind === 'eval' && m.step === 0)!.values.pass1).toBeGreaterThan(0.02);
    expect(metrics.filter((m) => m.kind === 'step').map((m) => m.values['train/tokens']! > 0)).toEqual([true, true]);
    const evaluated = sh('clawgym eval', 'npx', ['clawgym', 'eval', '--limit', '10'], project);
    expect(evaluated.stdout).toMatch(/agentloop\s+vocab-upper\s+10\s+10\s/);
    done.add('project');
  }, 1_200_000);

  it('`clawgym new plugin` of each kind makes a package that passes its own tests, publishes, and shows up in the project\'s `clawgym plugins`', () => {
    after('project');
    const kinds = ['task', 'harness', 'hooks', 'algorithm', 'reporter'];
    const plugins = folder(join(work, 'plugins'));
    for (const kind of kinds) {
      sh('clawgym new plugin', join(project, 'node_modules', '.bin', 'clawgym'), ['new', 'plugin', '--kind', kind, `my-${kind}`], plugins);
      const dir = join(plugins, `clawgym-plugin-my-${kind}`);
      sh('npm install (plugin)', 'npm', ['install'], dir, { timeout: 600_000 });
      const test = sh('npm test (plugin)', 'npm', ['test'], dir);
      expect(test.stdout).toMatch(/^ℹ fail 0$/m);
      sh('npm publish (plugin)', 'npm', ['publish'], dir);
    }
    sh('npm install (plugins into the project)', 'npm', ['install', '-D', ...kinds.map((k) => `clawgym-plugin-my-${k}`)], project, { timeout: 600_000 });
    const rows = JSON.parse(sh('clawgym plugins', 'npx', ['clawgym', 'plugins', '--json'], project).stdout) as { kind: string; name: string; packageName: string; error?: string }[];
    const mine = rows.filter((r) => r.packageName.startsWith('clawgym-plugin-my-')).map(({ kind, name, packageName, error }) => ({ kind, name, packageName, error }));
    expect(mine).toEqual([
      { kind: 'algorithm', name: 'my-algorithm', packageName: 'clawgym-plugin-my-algorithm', error: undefined },
      { kind: 'harness', name: 'my-harness', packageName: 'clawgym-plugin-my-harness', error: undefined },
      { kind: 'hooks', name: 'my-hooks', packageName: 'clawgym-plugin-my-hooks', error: undefined },
      { kind: 'reporter', name: 'my-reporter', packageName: 'clawgym-plugin-my-reporter', error: undefined },
      { kind: 'taskSuite', name: 'my-task', packageName: 'clawgym-plugin-my-task', error: undefined },
    ]);
  }, 1_200_000);
});
