import { join } from 'node:path';
import { createKernel, loadConfig, provider, slotOptions, trainerOptions } from '@clawgym/core';

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
