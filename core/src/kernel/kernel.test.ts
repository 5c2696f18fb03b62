import { createTestKernel, makeTree } from '../testing';
import { ErrorCodes } from '../errors';
import { HookError, HookTimeoutError } from './hook-errors';
import type { ClawGymPlugin } from '../contracts/plugin';
import type { RolloutRequest } from '../contracts/hooks';
import { KernelTokens as Tokens } from './tokens';

const request = (): RolloutRequest => ({
  runId: 'r', rolloutId: 'r-1', step: 1, taskId: 't', category: 'c', harness: 'h',
  instruction: 'do it', env: {}, tags: [], harnessOptions: {},
});

const plugin = (name: string, apply: ClawGymPlugin['apply']): ClawGymPlugin => ({ name, apply });

describe('hook failures', () => {
  it('wraps an async tap failure with the plugin and hook names, keeping the cause', async () => {
    const boom = new Error('disk full');
    const kernel = await createTestKernel({
      plugins: [plugin('acme-tagger', (api) => api.hooks.beforeRollout.tapPromise(undefined, async () => { throw boom; }))],
    });
    const err = await kernel.hooks.beforeRollout.promise(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookError);
    expect((err as HookError).message).toBe('plugin "acme-tagger" failed in hook "beforeRollout": disk full');
    expect((err as HookError).plugin).toBe('acme-tagger');
    expect((err as HookError).hook).toBe('beforeRollout');
    expect((err as HookError).cause).toBe(boom);
    expect((err as HookError).code).toBe(ErrorCodes.HOOK_FAILED);
  });

  it('wraps a sync tap failure too', async () => {
    const kernel = await createTestKernel({
      plugins: [plugin('bad-logger', (api) => api.hooks.onTreeBuilt.tap(undefined, () => { throw new TypeError('nope'); }))],
    });
    await expect(kernel.hooks.onTreeBuilt.promise(makeTree({ rolloutId: 'a', reward: 1 })))
      .rejects.toThrow('plugin "bad-logger" failed in hook "onTreeBuilt": nope');
  });

  it('times out an async tap that never settles, naming plugin, hook and limit', async () => {
    const kernel = await createTestKernel({
      config: { hooks: { timeoutMs: 50 } },
      plugins: [plugin('stuck', (api) => api.hooks.stepStart.tapPromise(undefined, () => new Promise<void>(() => {})))],
    });
    const started = Date.now();
    const err = await kernel.hooks.stepStart.promise({ runId: 'r', step: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookTimeoutError);
    expect((err as Error).message).toBe('plugin "stuck" did not settle hook "stepStart" within 50 ms');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('uses per-hook timeouts when configured', async () => {
    const kernel = await createTestKernel({
      config: { hooks: { timeoutMs: 10_000, perHookTimeoutMs: { runEnd: 30 } } },
      plugins: [plugin('slow-end', (api) => api.hooks.runEnd.tapPromise(undefined, () => new Promise<void>(() => {})))],
    });
    await expect(kernel.hooks.runEnd.promise({ runId: 'r', status: 'completed', steps: 1 })).rejects.toThrow('within 30 ms');
  });
});

describe('hooks at work', () => {
  it('runs waterfall taps in stage order, each seeing the previous value, named after its plugin', async () => {
    const kernel = await createTestKernel({
      plugins: [
        plugin('second', (api) => api.hooks.beforeRollout.tap({ stage: 10 }, (r) => ({ ...r, tags: [...r.tags, 'second'] }))),
        plugin('first', (api) => api.hooks.beforeRollout.tapPromise({ stage: -10 }, async (r) => ({ ...r, tags: [...r.tags, 'first'] }))),
      ],
    });
    const out = await kernel.hooks.beforeRollout.promise(request());
    expect(out.tags).toEqual(['first', 'second']);
    expect(kernel.hooks.beforeRollout.taps.map((t) => t.name)).toEqual(['first', 'second']);
  });
});

describe('plugins', () => {
  it('refuses two plugins with one name, naming both packages', async () => {
    const kernel = await createTestKernel();
    await kernel.use(plugin('dup', () => {}), { packageName: 'clawgym-plugin-one', version: '1.0.0' });
    await expect(kernel.use(plugin('dup', () => {}), { packageName: '@acme/clawgym-plugin-two', version: '2.0.0' }))
      .rejects.toThrow('two plugins are named "dup": clawgym-plugin-one@1.0.0 (plugin "dup") and @acme/clawgym-plugin-two@2.0.0 (plugin "dup")');
  });

  it('refuses two providers of one name, naming both packages', async () => {
    const harness = { name: 'claude-code', wireFormat: 'anthropic-messages' as const, check: async () => ({ ok: true }), run: async () => ({ exitCode: 0, timedOut: false, logTail: '' }) };
    const kernel = await createTestKernel();
    await kernel.use(plugin('cc-1', (api) => api.provide.harness(harness)), { packageName: '@clawgym/harness-claude-code' });
    const err = await kernel.use(plugin('cc-2', (api) => api.provide.harness(harness)), { packageName: 'clawgym-plugin-cc' }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('harness "claude-code" is provided twice');
    expect((err as Error).message).toContain('@clawgym/harness-claude-code');
    expect((err as Error).message).toContain('clawgym-plugin-cc');
  });

  it('refuses a plugin built for another core major, saying so', async () => {
    const kernel = await createTestKernel();
    await expect(kernel.use({ name: 'future', core: '^2.0.0', apply: () => {} }, { packageName: 'clawgym-plugin-future', version: '3.1.0' }))
      .rejects.toThrow(/plugin "future" \(package clawgym-plugin-future@3\.1\.0\) was built for @clawgym\/core \^2\.0\.0, but this is @clawgym\/core 0\.\d+\.\d+/);
  });

  it('refuses a package whose peerDependencies exclude this core', async () => {
    const kernel = await createTestKernel();
    const err = await kernel.use({ name: 'old', apply: () => {} }, { packageName: 'clawgym-plugin-old', packageRange: '^1.0.0' }).catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe(ErrorCodes.PLUGIN_INCOMPATIBLE);
  });

  it('wraps a plugin whose apply throws', async () => {
    const kernel = await createTestKernel();
    await expect(kernel.use(plugin('crashy', () => { throw new Error('bad options'); })))
      .rejects.toThrow('plugin "crashy" failed while loading: bad options');
  });

  it('gives each run its own child container owning the run services', async () => {
    const a = await createTestKernel();
    const b = await createTestKernel();
    expect(a.container.resolve(Tokens.Hooks)).toBe(a.hooks);
    expect(b.container.resolve(Tokens.Hooks)).toBe(b.hooks);
    expect(a.container.resolve(Tokens.Hooks)).not.toBe(b.hooks);
    expect(a.container.resolve(Tokens.Config).hooks.timeoutMs).toBe(60_000);
  });

  it('logs plugin messages with the plugin name', async () => {
    const kernel = await createTestKernel({ plugins: [plugin('chatty', (api) => api.log.info('hello'))] });
    expect(kernel.logs).toEqual(['[chatty] hello']);
  });
});
