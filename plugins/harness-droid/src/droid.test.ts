import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { droidHarness } from './index';

const BIN = '/h/droid/node_modules/droid/bin/droid';

describe('Factory Droid harness, run in a recording sandbox', () => {
  it('writes settings.json under its HOME (one custom model at the session, the key by reference) and runs droid exec in the workspace, the key only in the environment', async () => {
    const sandbox = recordingSandbox();
    try {
      const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
      const result = await droidHarness.run({
        sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal, options: { bin: BIN, compactionTokenLimit: 50_000 },
      });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const settings = JSON.parse(sandbox.files.get('/home/agent/.factory/settings.json')!) as Record<string, unknown>;
      expect(settings).toEqual({
        compactionTokenLimit: 50_000,
        customModels: [{ model: 'policy', displayName: 'policy', baseUrl: 'http://127.0.0.1:9/s/r1/v1', apiKey: '${CLAWGYM_API_KEY}', provider: 'generic-chat-completion-api', maxOutputTokens: 8192 }],
      });
      const run = sandbox.execs[sandbox.execs.length - 1]!;
      expect(run.argv).toEqual([BIN, 'exec', '--skip-permissions-unsafe', '-m', 'custom:policy-0', '-o', 'json', '--cwd', sandbox.workspacePath, 'Create hello.txt']);
      expect(run.options.env).toMatchObject({ HOME: '/home/agent', CLAWGYM_API_KEY: 'secret-key', FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false', FACTORY_DISABLE_DYNAMIC_CONFIG: 'true', FACTORY_AIRGAP_ENABLED: 'true' });
      expect(JSON.stringify(run.argv)).not.toContain('secret-key');
      expect([...sandbox.files.values()].join('')).not.toContain('secret-key');
      expect(droidHarness.hostPaths!({ bin: BIN })).toEqual(['/h/droid']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('names a model with spaces as Droid does (dashes), and leaves compaction at Droid\'s own limit unless told', async () => {
    const sandbox = recordingSandbox();
    try {
      await droidHarness.run({
        sandbox, endpoint: { baseUrl: 'http://x', apiKey: 'k', model: 'my policy' }, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: { bin: BIN },
      });
      expect(sandbox.execs[sandbox.execs.length - 1]!.argv).toContain('custom:my-policy-0');
      expect(JSON.parse(sandbox.files.get('/home/agent/.factory/settings.json')!)).not.toHaveProperty('compactionTokenLimit');
    } finally {
      await sandbox.destroy();
    }
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(droidHarness.run({
        sandbox, endpoint: { baseUrl: 'http://x', apiKey: 'k', model: 'm' }, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: { yolo: true },
      })).rejects.toThrow(/yolo/);
    } finally {
      await sandbox.destroy();
    }
  });
});

describe('Factory Droid harness, the oracle\'s calls', () => {
  it('runs read_file, write_file, list_files and bash as Execute in the workspace, quoting paths and content', () => {
    const call = (name: string, args: Record<string, unknown>) => droidHarness.oracleCall!({ name, arguments: args });
    expect(call('write_file', { path: "it's.txt", content: 'hi' })).toEqual({ name: 'Execute', arguments: { summary: 'Write the file', command: "printf '%s' 'hi' > 'it'\\''s.txt'" } });
    expect(call('read_file', { path: 'a.txt' })).toEqual({ name: 'Execute', arguments: { summary: 'Read the file', command: "cat -- 'a.txt'" } });
    expect(call('list_files', {})).toEqual({ name: 'Execute', arguments: { summary: 'List the files', command: "ls -1 -- '.'" } });
    expect(call('bash', { command: 'true' })).toEqual({ name: 'Execute', arguments: { summary: 'Run a command', command: 'true' } });
  });
});

const droid = harnessE2ePrerequisites('droid');
describeIf(droid.missing, 'clawgym doctor on the Factory Droid harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed CLI at its bin; a bin that is not there is missing, with the install command', () => {
    const bin = 'bin' in droid.cli ? droid.cli.bin : '';
    const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify([{ use: 'droid', options: { bin } }])} };\n` }, 'clawgym-doctor-droid-');
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const rows = (cfg: string) => {
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: cfg, encoding: 'utf8', timeout: 60_000 });
      return JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[];
    };
    expect(rows(dir).find((x) => x.what === 'harness droid: CLI')).toMatchObject({ status: 'ok', detail: `Factory Droid at ${bin}` });
    const gone = tempProject({ 'clawgym.config.mjs': 'export default { harnesses: [{ use: \'droid\', options: { bin: \'/nonexistent/droid\' } }] };\n' }, 'clawgym-doctor-droid-');
    expect(rows(gone).find((x) => x.what === 'harness droid: CLI')).toMatchObject({
      status: 'missing', detail: 'Factory Droid: bin "/nonexistent/droid" is not an executable file', install: 'npm i -D droid',
    });
  }, 120_000);
});
