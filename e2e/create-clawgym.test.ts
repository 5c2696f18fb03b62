import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createKernel, loadConfig, provider, slotOptions, trainerOptions } from '@clawgym/core';

const repo = resolve(__dirname, '..');
const bin = join(repo, 'create-clawgym', 'bin.js');
// Made inside the repository (an ignored folder) so the project's @clawgym/* resolve to the
// workspace's; e2e/registry.e2e.test.ts makes one outside it, from a registry.
mkdirSync(join(repo, 'node_modules', '.cache'), { recursive: true });
const root = mkdtempSync(join(repo, 'node_modules', '.cache', 'create-clawgym-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('create-clawgym', () => {
  it('makes a project whose package.json names every package of its config at one version, and whose config starts from the shipped cold start', async () => {
    const r = spawnSync(process.execPath, [bin, 'My Project'], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const dir = join(root, 'My Project');
    expect(r.stdout).toContain(`Made a ClawGym project in ${dir}:`);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; devDependencies: Record<string, string> };
    const version = (JSON.parse(readFileSync(join(repo, 'core', 'package.json'), 'utf8')) as { version: string }).version;
    expect(pkg.name).toBe('my-project');
    expect(pkg.devDependencies).toEqual(Object.fromEntries(['@clawgym/core', '@clawgym/engine-embedded', '@clawgym/harness-agentloop', '@clawgym/task-builtin', '@clawgym/algo-grpo'].map((n) => [n, `^${version}`])));

    const config = loadConfig({ cwd: dir, configFile: join(dir, 'clawgym.config.ts') });
    const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
    // Every provider the config names comes from a package the project installs.
    const origins = new Set<string>();
    for (const [kind, slot] of [['harness', config.harnesses[0]!], ['taskSuite', config.tasks[0]!], ['algorithm', config.algorithm], ['engine', config.engine], ['trainer', config.trainer]] as const) {
      await provider(kernel, kind, slot);
      const name = typeof slot === 'string' ? slot : slot.use;
      const origin = kernel.registry.entries(kind).find((e) => e.name === name)?.origin.packageName;
      if (origin) origins.add(origin);
    }
    expect([...origins].every((o) => o === '@clawgym/core' || o in pkg.devDependencies)).toBe(true);
    // The checkpoint 'cold-start' is found in @clawgym/engine-embedded and fits the model.
    const ctx = { runDir: join(dir, 'runs', 'x'), seed: 1, rootDir: config.rootDir };
    const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), ctx);
    const trainer = await (await provider(kernel, 'trainer', config.trainer)).create(trainerOptions(config), ctx);
    expect(engine.policyVersion()).toBe(0);
    expect(trainer.policyVersion()).toBe(0);
    await kernel.dispose();
  });

  it('refuses a folder that holds anything, and a missing folder name', () => {
    const taken = join(root, 'taken');
    mkdirSync(join(taken, 'x'), { recursive: true });
    const r = spawnSync(process.execPath, [bin, 'taken'], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`error: ${taken} exists and is not empty\n  hint: Name a new folder, or empty this one.\n`);
    const none = spawnSync(process.execPath, [bin], { cwd: root, encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('name the folder to make');
  });
});
