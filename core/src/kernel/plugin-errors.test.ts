import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig } from '../config/load';
import { isClawGymError, type ClawGymError } from '../errors';
import { createKernel } from '../run/create-kernel';
import { listPlugins } from '../cli/commands/plugins';
import { provider } from './create';
import { findPluginPackage, SHIPPED_PACKAGES, shippedPackageFor } from './resolve';
import { installPackage, project, removeProjects, suitePlugin } from './__fixtures__/packages';

afterAll(removeProjects);

/** The error a promise rejects with (the test fails if it resolves). */
async function failure(p: Promise<unknown>): Promise<ClawGymError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (!isClawGymError(err)) throw new Error(`expected a ClawGymError, got ${String(err)}`);
  return err;
}

/** A project with the demo task-suite package installed: plugin "tasks-demo", suite "count-lines", no `provides`. */
function demoProject(): string {
  const dir = project();
  installPackage(dir, 'clawgym-plugin-tasks-demo', suitePlugin('tasks-demo', 'count-lines'));
  return dir;
}

const kernelIn = (dir: string, config: Record<string, unknown> = {}) => createKernel(resolveConfig(config, { rootDir: dir }));

describe('a name that nothing answers to', () => {
  it('offers the nearest installed name (did you mean) and no install command for a package that does not exist', async () => {
    const dir = demoProject();
    const err = await failure(kernelIn(dir).then((k) => provider(k, 'taskSuite', 'taks-demo')));
    expect(err.code).toBe('CLAWGYM_PLUGIN_NOT_FOUND');
    expect(err.message).toBe(`cannot find plugin "taks-demo" (a taskSuite) from ${dir}; tried @clawgym/task-taks-demo, clawgym-plugin-taks-demo`);
    expect(err.hint).toBe('Did you mean "count-lines" (the taskSuite that clawgym-plugin-tasks-demo@1.0.0, plugin "tasks-demo", provides)? `clawgym plugins` lists what is installed.');
    expect(err.hint).not.toContain('npm i');
  });

  it('suggests a suite by its own name, and a plugin by its package in "plugins"', async () => {
    const dir = demoProject();
    const kernel = await kernelIn(dir);
    expect((await failure(provider(kernel, 'taskSuite', 'count-line'))).hint).toMatch(/^Did you mean "count-lines" \(a taskSuite from clawgym-plugin-tasks-demo@1\.0\.0\)\?/);
    expect((await failure(kernelIn(dir, { plugins: ['taks-demo'] }))).hint).toMatch(/^Did you mean "tasks-demo" \(the plugin of clawgym-plugin-tasks-demo@1\.0\.0\)\?/);
  });

  it('names a package ClawGym publishes in the install hint, and nothing else', async () => {
    expect(SHIPPED_PACKAGES).toContain('@clawgym/engine-embedded');
    // The trainer `embedded` is in the engine's package: @clawgym/trainer-embedded does not exist.
    expect(shippedPackageFor('embedded', 'trainer')).toBe('@clawgym/engine-embedded');
    expect(shippedPackageFor('taks-demo', 'taskSuite')).toBeUndefined();
    expect(shippedPackageFor('sglang', 'engine')).toBe('@clawgym/engine-vllm');
    expect(shippedPackageFor('claude-code', 'harness')).toBe('@clawgym/harness-claude-code');
    for (const name of ['@acme/x', './local-plugin.js']) expect(shippedPackageFor(name, 'harness')).toBeUndefined();
    const err = await failure(kernelIn(project()).then((k) => provider(k, 'algorithm', 'nope')));
    expect(err.hint).toMatch(/^No ClawGym package is called so and nothing installed answers to "nope"/);
  });

  it('knows every package the workspace publishes, and no other', () => {
    const plugins = join(__dirname, '..', '..', '..', 'plugins');
    const names = readdirSync(plugins).map((d) => (JSON.parse(readFileSync(join(plugins, d, 'package.json'), 'utf8')) as { name: string; private?: boolean }))
      .filter((p) => !p.private).map((p) => p.name);
    expect([...SHIPPED_PACKAGES].sort()).toEqual(names.sort());
  });
});

describe('a suite named by its plugin\'s name', () => {
  it('says which suite the package provides, and what to write', async () => {
    const err = await failure(kernelIn(demoProject()).then((k) => provider(k, 'taskSuite', 'tasks-demo')));
    expect(err.code).toBe('CLAWGYM_PROVIDER_MISSING');
    expect(err.message).toBe('"tasks-demo" names the plugin package clawgym-plugin-tasks-demo@1.0.0, not a taskSuite: the package provides taskSuite "count-lines"');
    expect(err.hint).toBe("Name what it provides: tasks: ['count-lines'] in clawgym.config.ts.");
  });
});

describe('a suite that a package provides without declaring it', () => {
  it('is found by what the installed packages provide, as `clawgym plugins` lists it', async () => {
    const kernel = await kernelIn(demoProject());
    expect((await provider(kernel, 'taskSuite', 'count-lines')).name).toBe('count-lines');
    expect(kernel.registry.entries('taskSuite').find((e) => e.name === 'count-lines')?.origin.packageName).toBe('clawgym-plugin-tasks-demo');
  });
});

describe('an installed package that exports nothing usable', () => {
  it('without its dist/: named as such when asked for, and listed by `clawgym plugins`', async () => {
    const dir = project();
    const pkg = installPackage(dir, 'clawgym-plugin-unbuilt', null, { main: 'dist/index.js' });
    let err: unknown;
    try { findPluginPackage('unbuilt', dir, 'taskSuite'); } catch (e) { err = e; }
    expect(err).toMatchObject({
      code: 'CLAWGYM_PLUGIN_INVALID',
      message: `the plugin package clawgym-plugin-unbuilt@1.0.0 is installed (${pkg}) but exports nothing usable: its main "dist/index.js" does not exist`,
    });
    const rows = await listPlugins({ cwd: dir });
    expect(rows.find((r) => r.packageName === 'clawgym-plugin-unbuilt')).toMatchObject({ kind: '(unusable)', error: expect.stringContaining('exports nothing usable: its main "dist/index.js" does not exist') });
  });

  it('of the wrong shape: named as such when asked for, and listed by `clawgym plugins`', async () => {
    const dir = project();
    installPackage(dir, 'clawgym-plugin-shapeless', 'module.exports = { tasks: [] };');
    const err = await failure(kernelIn(dir, { plugins: ['shapeless'] }));
    expect(err.message).toBe('the plugin package clawgym-plugin-shapeless@1.0.0 exports nothing usable: its export is an object with tasks but no name and apply()');
    const rows = await listPlugins({ cwd: dir });
    expect(rows.find((r) => r.packageName === 'clawgym-plugin-shapeless')).toMatchObject({ kind: '(unusable)', error: err.message });
  });
});
