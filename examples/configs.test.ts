import { join } from 'node:path';
import { createKernel, loadConfig, provider, resolveConfig, slotOptions, trainerOptions } from '@clawgym/core';
import { paperConfig } from './paper/clawgym.config';
import { existsSync } from 'node:fs';
import { describeIf } from '@clawgym/core/testing';

const slotName = (s: string | { use: string }) => (typeof s === 'string' ? s : s.use);

// Every example config loads, validates and resolves every provider it names.
describe.each(['claude-code', 'mix-harness', 'agentloop-transfer', 'ppo', 'grpo-200', 'cold-start', 'cold-start-claude-code'])('examples/%s.config.ts', (name) => {
  it('is a valid config whose providers all resolve', async () => {
    const config = loadConfig({ cwd: __dirname, configFile: join(__dirname, `${name}.config.ts`) });
    expect(config.name).toBe(name);
    const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
    for (const slot of config.harnesses) await provider(kernel, 'harness', slot);
    for (const slot of config.tasks) await provider(kernel, 'taskSuite', slot);
    await provider(kernel, 'algorithm', config.algorithm);
    await provider(kernel, 'engine', config.engine);
    await provider(kernel, 'trainer', config.trainer);
    await provider(kernel, 'sandbox', config.sandbox);
  });
});

describe('the default config (clawgym.config.ts at the root)', () => {
  it('starts from the shipped cold-start checkpoint, which fits its model, on the family with room to learn', async () => {
    const root = join(__dirname, '..');
    const config = loadConfig({ cwd: root, configFile: join(root, 'clawgym.config.ts') });
    expect(config.name).toBe('default');
    const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
    const ctx = { runDir: join(root, 'runs', '.config-test'), seed: 1, rootDir: config.rootDir };
    const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), ctx);
    const trainer = await (await provider(kernel, 'trainer', config.trainer)).create(trainerOptions(config), ctx);
    // Loaded weights only: the run's own optimiser starts at step 0.
    expect(engine.policyVersion()).toBe(0);
    expect(trainer.policyVersion()).toBe(0);
    const tasks = await (await provider(kernel, 'taskSuite', config.tasks[0]!)).tasks('test', { seed: config.run.seed, limit: 4, options: slotOptions(config.tasks[0]!) });
    expect(new Set(tasks.map((t) => t.category))).toEqual(new Set(['vocab-upper']));
    await kernel.dispose();
  });
});

describe('the findings configs (examples/findings.ts)', () => {
  it('start from the shipped Claude Code cold start, which fits their model, give each harness a group of 8, and evaluate through both harnesses', async () => {
    for (const name of ['claude-code', 'mix-harness', 'agentloop-transfer']) {
      const config = loadConfig({ cwd: __dirname, configFile: join(__dirname, `${name}.config.ts`) });
      expect(config.run.groupSize).toBe(8); // each harness gets the same group, mix-harness included
      expect((config.run.evalHarnesses ?? []).map((h) => (typeof h === 'string' ? h : h.use))).toEqual(['agentloop', 'claude-code']);
      const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
      const ctx = { runDir: join(__dirname, '..', 'runs', `.config-test-${name}`), seed: 1, rootDir: config.rootDir };
      const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), ctx);
      expect(engine.policyVersion()).toBe(0);
      await kernel.dispose();
    }
  });
});

const SAMPLE = join(__dirname, '..', '..', 'shared', 'data', 'clawgym-task-sample');
describeIf(existsSync(join(SAMPLE, 'task_0000')) ? undefined : `the ClawGym-Task sample is not at ${SAMPLE}`, 'examples/paper/clawgym.config.ts', () => {

  it('loads as a config file', () => {
    expect(loadConfig({ cwd: __dirname, configFile: join(__dirname, 'paper', 'clawgym.config.ts') }).name).toMatch(/^paper/);
  });

  it.each([['paper', false], ['paper-standins', true]])('%s: ClawGym-Task for training, ClawGym-Bench held out, OpenClaw and Claude Code, the OpenClaw image', async (name, standins) => {
    const config = resolveConfig(paperConfig({ taskDir: SAMPLE, benchDir: SAMPLE, tokenizer: 'models/qwen3-4b', tinkerUrl: 'http://127.0.0.1:8000', standins }), { rootDir: join(__dirname, 'paper') });
    expect(config.name).toBe(name);
    expect(config.harnesses.map((h) => (typeof h === 'string' ? h : h.use))).toEqual(['openclaw', 'claude-code']);
    expect(config.sandbox).toEqual({ use: 'docker', options: { image: 'clawgym-openclaw:1' } });
    // The stand-ins take the config's default route too: SkyRL's stand-in samples what it trains.
    expect([slotName(config.engine), slotName(config.trainer)]).toEqual(['tinker', 'tinker']);
    expect(config.run.groupSize).toBe(standins ? 2 : 8);
    const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
    const [train, bench] = await Promise.all(config.tasks.map((slot) => provider(kernel, 'taskSuite', slot)));
    expect(await bench!.tasks('train', { seed: 0 })).toEqual([]);
    expect(await train!.tasks('test', { seed: 0 })).toEqual([]);
    const tasks = await train!.tasks('train', { seed: 0 });
    expect(tasks.length).toBeGreaterThan(100);
    expect(new Set(tasks.map((t) => t.workspacePath))).toEqual(new Set(['/root/.openclaw/workspace']));
    for (const slot of config.harnesses) await provider(kernel, 'harness', slot);
    await provider(kernel, 'sandbox', config.sandbox);
    await kernel.dispose();
  });
});
