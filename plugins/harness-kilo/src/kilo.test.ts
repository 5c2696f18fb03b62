import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { kiloHarness } from './index';

const BIN = '/h/kilo/node_modules/@kilocode/cli/bin/.kilo';

describe('Kilo Code harness, run in a recording sandbox', () => {
  it('writes kilo.json under its HOME (only the session\'s provider enabled) and runs kilo headless in the workspace, the key only in the environment', async () => {
    const sandbox = recordingSandbox();
    try {
      const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
      const result = await kiloHarness.run({
        sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal, options: { bin: BIN, contextLimit: 50_000 },
      });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const config = JSON.parse(sandbox.files.get('/home/agent/.config/kilo/kilo.json')!) as Record<string, unknown>;
      expect(config).toMatchObject({
        provider: { clawgym: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:9/s/r1/v1', apiKey: '{env:CLAWGYM_API_KEY}' }, models: { policy: { limit: { context: 50_000, output: 8192 } } } } },
        enabled_providers: ['clawgym'], model: 'clawgym/policy', small_model: 'clawgym/policy', autoupdate: false, share: 'disabled',
      });
      const run = sandbox.execs[sandbox.execs.length - 1]!;
      expect(run.argv).toEqual([BIN, 'run', '--format', 'json', '--auto', '--dir', sandbox.workspacePath, 'Create hello.txt']);
      expect(run.options.env).toMatchObject({
        HOME: '/home/agent', KILO_CONFIG: '/home/agent/.config/kilo/kilo.json', CLAWGYM_API_KEY: 'secret-key',
        KILO_DISABLE_MODELS_FETCH: '1', KILO_DISABLE_SESSION_INGEST: '1', KILO_TELEMETRY_LEVEL: 'off',
      });
      expect(JSON.stringify(run.argv)).not.toContain('secret-key');
      expect([...sandbox.files.values()].join('')).not.toContain('secret-key');
      expect(kiloHarness.hostPaths!({ bin: BIN })).toEqual(['/h/kilo']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(kiloHarness.run({
        sandbox, endpoint: { baseUrl: 'http://x', apiKey: 'k', model: 'm' }, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: { yolo: true },
      })).rejects.toThrow(/yolo/);
    } finally {
      await sandbox.destroy();
    }
  });
});

describe('Kilo Code harness, doctor\'s install hint in a project of one\'s own', () => {
  afterAll(removeTempProjects);
  it('names @kilocode/cli@7.7.7: the newest release (7.8.1) asks for a native package the registry does not hold', async () => {
    const dir = tempProject({ 'package.json': '{}\n' }, 'clawgym-kilo-hint-');
    const before = process.cwd();
    process.chdir(dir);
    try {
      expect(await kiloHarness.check({})).toMatchObject({ ok: false, install: 'npm i -D @kilocode/cli@7.7.7' });
      expect(await kiloHarness.check({ bin: '/nonexistent/.kilo' })).toMatchObject({ ok: false, install: 'npm i -D @kilocode/cli@7.7.7' });
    } finally {
      process.chdir(before);
    }
  });
});

const kilo = harnessE2ePrerequisites('kilo');
describeIf(kilo.missing, 'clawgym doctor on the Kilo Code harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed CLI at its bin; a bin that is not there is missing, with the install command', () => {
    const bin = 'bin' in kilo.cli ? kilo.cli.bin : '';
    const harnesses = [{ use: 'kilo', options: { bin } }];
    const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify(harnesses)} };\n` }, 'clawgym-doctor-kilo-');
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const rows = (cfg: string) => {
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: cfg, encoding: 'utf8', timeout: 60_000 });
      return JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[];
    };
    expect(rows(dir).find((x) => x.what === 'harness kilo: CLI')).toMatchObject({ status: 'ok', detail: `Kilo Code at ${bin}` });
    const gone = tempProject({ 'clawgym.config.mjs': 'export default { harnesses: [{ use: \'kilo\', options: { bin: \'/nonexistent/.kilo\' } }] };\n' }, 'clawgym-doctor-kilo-');
    expect(rows(gone).find((x) => x.what === 'harness kilo: CLI')).toMatchObject({
      status: 'missing', detail: 'Kilo Code: bin "/nonexistent/.kilo" is not an executable file', install: 'npm i -D @kilocode/cli@7.7.7',
    });
  }, 120_000);
});

describe('Kilo Code harness, the oracle\'s calls', () => {
  it('maps read_file, write_file, list_files and bash to Kilo\'s read, write and bash (relative paths, resolved in --dir)', () => {
    const call = (name: string, args: Record<string, unknown>) => kiloHarness.oracleCall!({ name, arguments: args });
    expect(call('write_file', { path: 'a.txt', content: 'hi' })).toEqual({ name: 'write', arguments: { filePath: 'a.txt', content: 'hi' } });
    expect(call('read_file', { path: 'a.txt' })).toEqual({ name: 'read', arguments: { filePath: 'a.txt' } });
    expect(call('list_files', { path: "it's" })).toEqual({ name: 'bash', arguments: { command: "ls -1 -- 'it'\\''s'", description: 'List files' } });
    expect(call('bash', { command: 'true' })).toEqual({ name: 'bash', arguments: { command: 'true', description: 'Run a command' } });
  });
});
