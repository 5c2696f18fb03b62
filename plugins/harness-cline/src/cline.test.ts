import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { clineHarness } from './index';

const BIN = '/h/cline/node_modules/cline/bin/.cline';
const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
const run = (sandbox: ReturnType<typeof recordingSandbox>, instruction: string, options: Record<string, unknown>) => clineHarness.run({
  sandbox, endpoint, instruction, timeoutMs: 1000, signal: new AbortController().signal, options,
});

describe('Cline harness, run in a recording sandbox', () => {
  it('writes providers.json under its HOME (no key in it) and runs cline headless in the workspace, the key only in the environment', async () => {
    const sandbox = recordingSandbox();
    try {
      const result = await run(sandbox, 'Create hello.txt', { bin: BIN, contextLimit: 50_000 });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const providers = JSON.parse(sandbox.files.get('/home/agent/.cline/data/settings/providers.json')!) as Record<string, unknown>;
      expect(providers).toMatchObject({
        version: 1, lastUsedProvider: 'openai-compatible',
        providers: { 'openai-compatible': { settings: {
          provider: 'openai-compatible', model: 'policy', baseUrl: 'http://127.0.0.1:9/s/r1/v1', contextWindow: 50_000, maxTokens: 8192,
          modelCatalog: { loadLatestOnInit: false, includeClineCloudModels: false },
        } } },
      });
      const exec = sandbox.execs[sandbox.execs.length - 1]!;
      expect(exec.argv).toEqual([BIN, '--json', '-c', sandbox.workspacePath, '-P', 'openai-compatible', '-m', 'policy', '--compaction', 'agentic', 'Create hello.txt']);
      expect(exec.options.env).toMatchObject({ HOME: '/home/agent', OPENAI_API_KEY: 'secret-key', CLINE_NO_AUTO_UPDATE: '1', DISABLE_TELEMETRY: '1', CLINE_SESSION_BACKEND_MODE: 'local' });
      expect(JSON.stringify(exec.argv)).not.toContain('secret-key');
      expect([...sandbox.files.values()].join('')).not.toContain('secret-key');
      expect(clineHarness.hostPaths!({ bin: BIN })).toEqual(['/h/cline']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('gives a one-word instruction a trailing newline: Cline would take it for a command\'s name', async () => {
    const sandbox = recordingSandbox();
    try {
      await run(sandbox, 'doctor', { bin: BIN, compaction: 'off' });
      expect(sandbox.execs[sandbox.execs.length - 1]!.argv.slice(-3)).toEqual(['--compaction', 'off', 'doctor\n']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(run(sandbox, 'x', { yolo: true })).rejects.toThrow(/yolo/);
      await expect(run(sandbox, 'x', { compaction: 'smart' })).rejects.toThrow(/compaction/);
    } finally {
      await sandbox.destroy();
    }
  });
});

const cline = harnessE2ePrerequisites('cline');
describeIf(cline.missing, 'clawgym doctor on the Cline harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed CLI at its bin; a bin that is not there is missing, with the install command', () => {
    const bin = 'bin' in cline.cli ? cline.cli.bin : '';
    const harnesses = [{ use: 'cline', options: { bin } }];
    const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify(harnesses)} };\n` }, 'clawgym-doctor-cline-');
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const rows = (cfg: string) => {
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: cfg, encoding: 'utf8', timeout: 60_000 });
      return JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[];
    };
    expect(rows(dir).find((x) => x.what === 'harness cline: CLI')).toMatchObject({ status: 'ok', detail: `Cline at ${bin}` });
    const gone = tempProject({ 'clawgym.config.mjs': 'export default { harnesses: [{ use: \'cline\', options: { bin: \'/nonexistent/.cline\' } }] };\n' }, 'clawgym-doctor-cline-');
    expect(rows(gone).find((x) => x.what === 'harness cline: CLI')).toMatchObject({
      status: 'missing', detail: 'Cline: bin "/nonexistent/.cline" is not an executable file', install: 'npm i -D cline',
    });
  }, 120_000);
});

describe('Cline harness, the oracle\'s calls', () => {
  it('maps read_file, write_file, list_files and bash to run_commands, which runs in the workspace (relative paths work)', () => {
    const call = (name: string, args: Record<string, unknown>) => clineHarness.oracleCall!({ name, arguments: args });
    expect(call('write_file', { path: 'd/a.txt', content: "it's" })).toEqual({ name: 'run_commands', arguments: { commands: [`mkdir -p -- "$(dirname -- 'd/a.txt')" && printf '%s' 'it'\\''s' > 'd/a.txt'`] } });
    expect(call('read_file', { path: 'a.txt' })).toEqual({ name: 'run_commands', arguments: { commands: ["cat -- 'a.txt'"] } });
    expect(call('list_files', {})).toEqual({ name: 'run_commands', arguments: { commands: ["ls -1 -- '.'"] } });
    expect(call('bash', { command: 'true' })).toEqual({ name: 'run_commands', arguments: { commands: ['true'] } });
  });
});
