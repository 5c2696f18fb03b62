import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { continueHarness } from './index';

const BIN = '/h/continue/node_modules/@continuedev/cli/dist/cn.js';
const NODE = '/h/node24/node_modules/node/bin/node';
const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
const run = (sandbox: ReturnType<typeof recordingSandbox>, options: Record<string, unknown>) => continueHarness.run({
  sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal, options,
});

describe('Continue harness, run in a recording sandbox', () => {
  it('writes config.yaml under its HOME (the key a secret read from the environment) and runs cn headless in the workspace', async () => {
    const sandbox = recordingSandbox();
    try {
      const result = await run(sandbox, { bin: BIN, node: NODE, contextLimit: 50_000 });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const config = JSON.parse(sandbox.files.get('/home/agent/.continue/config.yaml')!) as Record<string, unknown>;
      expect(config).toMatchObject({
        schema: 'v1',
        models: [{
          provider: 'openai', model: 'policy', apiBase: 'http://127.0.0.1:9/s/r1/v1', apiKey: '${{ secrets.CLAWGYM_API_KEY }}',
          roles: ['chat', 'edit', 'apply', 'summarize'], defaultCompletionOptions: { contextLength: 50_000, maxTokens: 8192 },
        }],
      });
      const exec = sandbox.execs[sandbox.execs.length - 1]!;
      expect(exec.argv).toEqual([NODE, BIN, '-p', '--auto', '--config', '/home/agent/.continue/config.yaml', 'Create hello.txt']);
      expect(exec.options.cwd).toBeUndefined();
      expect(exec.options.env).toMatchObject({
        HOME: '/home/agent', CONTINUE_GLOBAL_DIR: '/home/agent/.continue', CLAWGYM_API_KEY: 'secret-key',
        CONTINUE_CLI_ENABLE_TELEMETRY: '0', CONTINUE_METRICS_ENABLED: '0', CONTINUE_CLI_AUTO_UPDATED: 'true',
      });
      expect(JSON.stringify(exec.argv)).not.toContain('secret-key');
      expect([...sandbox.files.values()].join('')).not.toContain('secret-key');
      expect(continueHarness.hostPaths!({ bin: BIN, node: NODE })).toEqual(['/h/continue', '/h/node24']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(run(sandbox, { yolo: true })).rejects.toThrow(/yolo/);
    } finally {
      await sandbox.destroy();
    }
  });
});

const cont = harnessE2ePrerequisites('continue');
describeIf(cont.missing, 'clawgym doctor on the Continue harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed CLI at its bin; a bin that is not there is missing, with the install command', () => {
    const bin = 'bin' in cont.cli ? cont.cli.bin : '';
    const harnesses = [{ use: 'continue', options: { bin } }];
    const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify(harnesses)} };\n` }, 'clawgym-doctor-continue-');
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const rows = (cfg: string) => {
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: cfg, encoding: 'utf8', timeout: 60_000 });
      return JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[];
    };
    expect(rows(dir).find((x) => x.what === 'harness continue: CLI')).toMatchObject({ status: 'ok', detail: `Continue at ${bin}` });
    const gone = tempProject({ 'clawgym.config.mjs': 'export default { harnesses: [{ use: \'continue\', options: { bin: \'/nonexistent/cn.js\' } }] };\n' }, 'clawgym-doctor-continue-');
    expect(rows(gone).find((x) => x.what === 'harness continue: CLI')).toMatchObject({
      status: 'missing', detail: 'Continue: bin "/nonexistent/cn.js" is not an executable file', install: 'npm i -D @continuedev/cli',
    });
  }, 120_000);
});

describe('Continue harness, the oracle\'s calls', () => {
  it('maps read_file, write_file, list_files and bash to Continue\'s Read, Write, List and Bash', () => {
    const call = (name: string, args: Record<string, unknown>) => continueHarness.oracleCall!({ name, arguments: args });
    expect(call('write_file', { path: 'a.txt', content: 'hi' })).toEqual({ name: 'Write', arguments: { filepath: 'a.txt', content: 'hi' } });
    expect(call('read_file', { path: 'a.txt' })).toEqual({ name: 'Read', arguments: { filepath: 'a.txt' } });
    expect(call('list_files', {})).toEqual({ name: 'List', arguments: { dirpath: '.' } });
    expect(call('bash', { command: 'true' })).toEqual({ name: 'Bash', arguments: { command: 'true' } });
  });
});
