import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { ompHarness } from './index';

const BIN = '/h/omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js';
const BUN = '/h/omp/node_modules/bun/bin/bun.exe';

describe('oh-my-pi harness, run in a recording sandbox', () => {
  it('writes models.json and config.yml in its agent folder and runs the script under Bun headless in the workspace, the key only in the environment', async () => {
    const sandbox = recordingSandbox();
    try {
      const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
      const result = await ompHarness.run({
        sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal,
        options: { bin: BIN, bun: BUN, contextWindow: 50_000, compactionThresholdTokens: 20_000 },
      });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const models = JSON.parse(sandbox.files.get('/home/agent/.omp/agent/models.json')!) as { providers: Record<string, Record<string, unknown>> };
      expect(models.providers.clawgym).toMatchObject({
        baseUrl: 'http://127.0.0.1:9/s/r1/v1', api: 'openai-completions', apiKey: 'CLAWGYM_API_KEY',
        models: [{ id: 'policy', contextWindow: 50_000, maxTokens: 8192 }],
      });
      // Subagents wait for their results (no background jobs, which a headless run would end before they report).
      expect(JSON.parse(sandbox.files.get('/home/agent/.omp/agent/config.yml')!)).toEqual({
        startup: { checkUpdate: false, setupWizard: false }, async: { enabled: false }, compaction: { enabled: true, thresholdTokens: 20_000 },
      });
      const run = sandbox.execs[sandbox.execs.length - 1]!;
      expect(run.argv).toEqual([BUN, BIN, '--model', 'clawgym/policy', '--no-session', '--auto-approve', '--no-title', '--cwd', sandbox.workspacePath, '-p', 'Create hello.txt']);
      expect(run.options.env).toMatchObject({ HOME: '/home/agent', PI_CODING_AGENT_DIR: '/home/agent/.omp/agent', CLAWGYM_API_KEY: 'secret-key' });
      // The key is read from the environment: never on the command line or in a file.
      expect(JSON.stringify(run.argv)).not.toContain('secret-key');
      expect([...sandbox.files.values()].join('')).not.toContain('secret-key');
      // The script and its Bun lie in one install folder: bound once.
      expect(ompHarness.hostPaths!({ bin: BIN, bun: BUN })).toEqual(['/h/omp']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('asks the CLI its version under its Bun where a sandbox runs it', async () => {
    const argvs: (readonly string[])[] = [];
    const run = async (argv: readonly string[]) => { argvs.push(argv); return { exitCode: 0, stdout: 'omp/18.2.3\n', stderr: '', timedOut: false }; };
    expect(await ompHarness.version!({ bin: BIN, bun: BUN }, run)).toBe('18.2.3');
    expect(argvs).toEqual([[BUN, BIN, '--version']]);
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(ompHarness.run({
        sandbox, endpoint: { baseUrl: 'http://x', apiKey: 'k', model: 'm' }, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: { node: '/usr/bin/node' },
      })).rejects.toThrow(/node/);
    } finally {
      await sandbox.destroy();
    }
  });
});

describe('oh-my-pi harness, doctor\'s install hint in a project of one\'s own', () => {
  afterAll(removeTempProjects);
  it('names @oh-my-pi/pi-coding-agent@18.2.3: the newest release (18.3.4) names a package the registry does not hold', async () => {
    const dir = tempProject({ 'package.json': '{}\n' }, 'clawgym-omp-hint-');
    const before = process.cwd();
    process.chdir(dir);
    try {
      expect(await ompHarness.check({})).toMatchObject({ ok: false, install: 'npm i -D @oh-my-pi/pi-coding-agent@18.2.3' });
      expect(await ompHarness.check({ bin: '/nonexistent/cli.js' })).toMatchObject({ ok: false, install: 'npm i -D @oh-my-pi/pi-coding-agent@18.2.3' });
    } finally {
      process.chdir(before);
    }
  });
});

const omp = harnessE2ePrerequisites('omp');
describeIf(omp.missing, 'clawgym doctor on the oh-my-pi harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed script and its Bun, and its version; a Bun that is not there is missing, with the install command', async () => {
    const bin = 'bin' in omp.cli ? omp.cli.bin : '';
    const bun = 'bin' in omp.cli ? omp.cli.node! : '';
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const rows = (options: Record<string, string>) => {
      const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify([{ use: 'omp', options }])} };\n` }, 'clawgym-doctor-omp-');
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      return (JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[]).find((x) => x.what === 'harness omp: CLI');
    };
    expect(rows({ bin, bun })).toMatchObject({ status: 'ok', detail: `oh-my-pi at ${bin}` });
    // Its version (what a fingerprint and the run lock record) from its package, without starting it.
    expect(await ompHarness.version!({ bin, bun })).toBe('18.2.3');
    expect(rows({ bin, bun: '/nonexistent/bun' })).toMatchObject({
      status: 'missing', detail: 'oh-my-pi\'s Bun: bin "/nonexistent/bun" is not an executable file', install: 'npm i -D bun',
    });
  }, 120_000);
});
