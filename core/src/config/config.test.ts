import { join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadConfig, resolveConfig } from './load';
import { ErrorCodes } from '../errors';
import { createKernel } from '../run/create-kernel';

const fixtures = join(__dirname, '__fixtures__');

describe('config loading', () => {
  const dirs: string[] = [];
  const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('loads a .ts config that imports relative .ts modules (inside jest)', async () => {
    const config = loadConfig({ cwd: join(fixtures, 'ts-relative') });
    expect(config.name).toBe('ts-relative');
    expect(config.run.steps).toBe(3);
    expect(config.configFile).toBe(join(fixtures, 'ts-relative', 'clawgym.config.ts'));
    expect(config.rootDir).toBe(join(fixtures, 'ts-relative'));
    const logs: string[] = [];
    const kernel = await createKernel(config, { logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m) } });
    expect(kernel.registry.get('harness', 'echo-harness').wireFormat).toBe('openai-chat');
    expect(logs).toEqual(['[local:echo] hi']);
  });

  it('finds the config from a subfolder (searches up to the project root)', () => {
    expect(loadConfig({ cwd: join(fixtures, 'ts-relative', 'lib') }).name).toBe('ts-relative');
  });

  it('reads a "clawgym" key in package.json', () => {
    const config = loadConfig({ cwd: join(fixtures, 'pkg-key') });
    expect(config.name).toBe('from-package-json');
    expect(config.run.steps).toBe(7);
  });

  it('reads clawgym.config.mjs', () => {
    expect(loadConfig({ cwd: join(fixtures, 'mjs') }).algorithm).toEqual({ use: 'ppo', options: {} });
  });

  it('fills defaults and freezes the result', () => {
    const config = resolveConfig({}, { rootDir: '/x' });
    expect(config.algorithm).toBe('grpo');
    expect(config.run.groupSize).toBe(8);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.run)).toBe(true);
    expect(() => { (config.run as { steps: number }).steps = 1; }).toThrow(TypeError);
  });

  it('says when no config exists, and how to make one', () => {
    const empty = tmp('clawgym-noconfig-');
    writeFileSync(join(empty, 'package.json'), '{"name":"x"}');
    expect(() => loadConfig({ cwd: empty })).toThrow(expect.objectContaining({ code: ErrorCodes.CONFIG_NOT_FOUND }));
  });

  it('reports a config that fails to evaluate with the cause', () => {
    const dir = tmp('clawgym-badconfig-');
    writeFileSync(join(dir, 'clawgym.config.ts'), "import './missing-module';\nexport default {};\n");
    expect(() => loadConfig({ cwd: dir })).toThrow(/could not load the config: .*missing-module/);
  });
});

describe('config validation', () => {
  const invalid = (raw: unknown) => {
    try {
      resolveConfig(raw, { rootDir: '/x', configFile: '/x/clawgym.config.ts' });
    } catch (err) {
      expect((err as { code: string }).code).toBe(ErrorCodes.CONFIG_INVALID);
      return (err as Error).message;
    }
    throw new Error('config was accepted');
  };

  it('names a misspelled top-level key and suggests the nearest', () => {
    expect(invalid({ algoritm: 'grpo' })).toContain('algoritm: unknown key. Did you mean "algorithm"?');
  });

  it('names a misspelled nested key with its full path', () => {
    expect(invalid({ run: { stpes: 3 } })).toContain('run.stpes: unknown key. Did you mean "run.steps"?');
    expect(invalid({ loss: { tiscap: 2 } })).toContain('loss.tiscap: unknown key. Did you mean "loss.tisCap"?');
  });

  it('suggests inside a slot object given as { use, options }', () => {
    expect(invalid({ engine: { use: 'embedded', optoins: {} } })).toContain('engine.optoins: unknown key. Did you mean "engine.options"?');
  });

  it('lists valid keys when nothing is close', () => {
    expect(invalid({ proxy: { zzzzzzzz: 1 } })).toContain('proxy.zzzzzzzz: unknown key (valid keys here: host, port, maxBodyBytes, headersTimeoutMs, bodyTimeoutMs)');
  });

  it('names the path of a wrong type', () => {
    expect(invalid({ run: { steps: 'ten' } })).toMatch(/run\.steps: .*number/i);
    expect(invalid({ harnesses: [] })).toMatch(/harnesses: /);
  });
});
