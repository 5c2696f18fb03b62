import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../config/load';
import { provider } from './create';
import { createKernel } from '../run/create-kernel';
import { discoverPluginPackages } from './discover';
import { findPluginPackage, pluginCandidates, SHIPPED_UNDER_ANOTHER_NAME } from './resolve';
import type { PluginKind } from '../contracts/plugin';

/** Write a fake plugin package providing an algorithm called `provides`. */
function fakePackage(root: string, name: string, provides: string, extra: Record<string, unknown> = {}) {
  const dir = join(root, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.2.3', main: 'index.js', keywords: ['clawgym-plugin'], ...extra }));
  writeFileSync(join(dir, 'index.js'), `module.exports = () => ({ name: ${JSON.stringify(`pkg:${name}`)}, apply(api) {
    api.provide.algorithm({ name: ${JSON.stringify(provides)}, needsValues: false, computeAdvantages() { throw new Error('unused'); } });
  } });`);
}

const projects: string[] = [];
const project = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-resolve-')); projects.push(d); return d; };
// rmSync does not follow symlinks: the linked example plugin is left alone.
afterAll(() => { for (const d of projects) rmSync(d, { recursive: true, force: true }); });

describe('plugin name expansion', () => {
  it('expands a short name by kind, then the community prefix', () => {
    expect(pluginCandidates('grpo', 'algorithm')).toEqual(['@clawgym/algo-grpo', 'clawgym-plugin-grpo']);
    expect(pluginCandidates('claude-code', 'harness')).toEqual(['@clawgym/harness-claude-code', 'clawgym-plugin-claude-code']);
    expect(pluginCandidates('embedded', 'trainer')).toEqual(['@clawgym/trainer-embedded', '@clawgym/engine-embedded', 'clawgym-plugin-embedded']);
  });

  it('tries the shipped package that provides a name under another package\'s name first', () => {
    expect(pluginCandidates('sglang', 'engine')).toEqual(['@clawgym/engine-vllm', '@clawgym/engine-sglang', 'clawgym-plugin-sglang']);
    // The table is what ClawGym's packages declare: every name a package provides besides its own.
    const declared: Record<string, Record<string, string>> = {};
    const plugins = join(__dirname, '..', '..', '..', 'plugins');
    for (const dir of readdirSync(plugins)) {
      const pkg = JSON.parse(readFileSync(join(plugins, dir, 'package.json'), 'utf8')) as { name: string; clawgym?: { provides?: Record<string, string[]> } };
      for (const [kind, names] of Object.entries(pkg.clawgym?.provides ?? {})) {
        for (const n of names) {
          const byName = pluginCandidates(n, kind as PluginKind).filter((c) => c !== SHIPPED_UNDER_ANOTHER_NAME[kind as PluginKind]?.[n]);
          if (!byName.includes(pkg.name)) (declared[kind] ??= {})[n] = pkg.name;
        }
      }
    }
    expect(declared).toEqual(SHIPPED_UNDER_ANOTHER_NAME);
  });

  it('tries every kind in a fixed order when the kind is unknown', () => {
    expect(pluginCandidates('grpo')).toEqual([
      '@clawgym/harness-grpo', '@clawgym/task-grpo', '@clawgym/algo-grpo', '@clawgym/sandbox-grpo',
      '@clawgym/engine-grpo', '@clawgym/trainer-grpo', '@clawgym/kernels-grpo', '@clawgym/reporter-grpo', '@clawgym/loss-grpo',
      'clawgym-plugin-grpo',
    ]);
  });

  it('keeps kind-prefixed, full and scoped names deterministic', () => {
    expect(pluginCandidates('algo-grpo')).toEqual(['@clawgym/algo-grpo', 'clawgym-plugin-algo-grpo']);
    expect(pluginCandidates('@acme/x')).toEqual(['@acme/clawgym-plugin-x', '@acme/x']);
    expect(pluginCandidates('@acme/clawgym-plugin-x')).toEqual(['@acme/clawgym-plugin-x']);
    expect(pluginCandidates('@clawgym/algo-ppo')).toEqual(['@clawgym/algo-ppo']);
    expect(pluginCandidates('clawgym-plugin-y')).toEqual(['clawgym-plugin-y']);
    expect(pluginCandidates('./my-plugin')).toEqual(['./my-plugin']);
  });
});

describe('plugin resolution', () => {
  it('prefers @clawgym/<kind>-<name> over clawgym-plugin-<name>', () => {
    const dir = project();
    fakePackage(dir, '@clawgym/algo-x', 'x');
    fakePackage(dir, 'clawgym-plugin-x', 'x');
    expect(findPluginPackage('x', dir, 'algorithm').packageName).toBe('@clawgym/algo-x');
    expect(findPluginPackage('x', dir, 'harness').packageName).toBe('clawgym-plugin-x');
  });

  it('expands @scope/name to @scope/clawgym-plugin-name', () => {
    const dir = project();
    fakePackage(dir, '@acme/clawgym-plugin-z', 'z');
    expect(findPluginPackage('@acme/z', dir).packageName).toBe('@acme/clawgym-plugin-z');
  });

  it('lists every candidate tried when nothing is found', () => {
    const dir = project();
    let message = '';
    try {
      findPluginPackage('nothing', dir, 'algorithm');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`cannot find plugin "nothing" (an algorithm) from ${dir}; tried @clawgym/algo-nothing, clawgym-plugin-nothing`);
  });

  it('resolves from the config file\'s folder, not the current directory', async () => {
    const dir = project();
    fakePackage(dir, 'clawgym-plugin-local-only', 'local-only');
    const config = resolveConfig({ plugins: ['local-only'] }, { rootDir: dir });
    expect(process.cwd()).not.toBe(dir);
    const kernel = await createKernel(config);
    expect(kernel.registry.pluginOrigins().filter((o) => o.packageName !== '@clawgym/core')).toEqual([{ plugin: 'pkg:clawgym-plugin-local-only', packageName: 'clawgym-plugin-local-only', version: '1.2.3' }]);
  });

  it('loads a slot\'s provider by kind when no plugin provides it yet', async () => {
    const dir = project();
    fakePackage(dir, '@clawgym/algo-fancy', 'fancy');
    const kernel = await createKernel(resolveConfig({ algorithm: 'fancy' }, { rootDir: dir }));
    expect((await provider(kernel, 'algorithm', kernel.config.algorithm)).name).toBe('fancy');
  });

  it('loads a provider a package declares under clawgym.provides when no candidate package has its name', async () => {
    const dir = project();
    // One package providing two names, as @clawgym/engine-vllm provides `vllm` and `sglang`.
    fakePackage(dir, '@clawgym/algo-pair', 'second', { clawgym: { provides: { algorithm: ['first', 'second'] } } });
    const kernel = await createKernel(resolveConfig({ algorithm: 'second' }, { rootDir: dir }));
    expect((await provider(kernel, 'algorithm', kernel.config.algorithm)).name).toBe('second');
    expect(kernel.registry.entries('algorithm').find((e) => e.name === 'second')?.origin?.packageName).toBe('@clawgym/algo-pair');
    // Declared for another kind only: not found, with every candidate in the error.
    await expect(provider(kernel, 'reporter', 'second')).rejects.toThrow(/cannot find plugin "second" \(a reporter\)/);
  });

  it('refuses a package whose peer range excludes this core', async () => {
    const dir = project();
    fakePackage(dir, 'clawgym-plugin-old', 'old', { peerDependencies: { '@clawgym/core': '^7.0.0' } });
    await expect(createKernel(resolveConfig({ plugins: ['old'] }, { rootDir: dir })))
      .rejects.toThrow(/package clawgym-plugin-old@1\.2\.3\) was built for @clawgym\/core \^7\.0\.0, but this is @clawgym\/core/);
  });

  it('resolves the out-of-tree example plugin by its short name', async () => {
    const dir = project();
    mkdirSync(join(dir, 'node_modules'), { recursive: true });
    symlinkSync(resolve(__dirname, '../../../examples/clawgym-plugin-hello'), join(dir, 'node_modules', 'clawgym-plugin-hello'));
    const kernel = await createKernel(resolveConfig({ plugins: [['hello', { tag: 'from-test' }]] }, { rootDir: dir }));
    expect(kernel.registry.get('reporter', 'hello').name).toBe('hello');
    const out = await kernel.hooks.beforeRollout.promise({
      runId: 'r', rolloutId: 'r-1', step: 1, taskId: 't', category: 'c', harness: 'h', instruction: '', env: {}, tags: [], harnessOptions: {},
    });
    expect(out.tags).toEqual(['from-test']);
    expect(discoverPluginPackages(dir).map((p) => p.packageName)).toContain('clawgym-plugin-hello');
  });

  it('discovers only packages with the clawgym-plugin keyword', () => {
    const dir = project();
    fakePackage(dir, 'clawgym-plugin-real', 'real');
    fakePackage(dir, 'clawgym-plugin-unmarked', 'unmarked', { keywords: [] });
    expect(discoverPluginPackages(dir).map((p) => p.packageName)).toEqual(['clawgym-plugin-real']);
  });
});
