import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeIf, harnessE2ePrerequisites, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { cacheIsWarm, copilotHarness, defaultCacheDir } from './index';

const BIN = '/h/copilot/node_modules/@github/copilot-linux-x64/copilot';

/** A cache folder as the CLI leaves it once unpacked (or not, with `warm: false`). */
function cacheFolder(warm: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-copilot-cache-'));
  mkdirSync(join(dir, 'pkg', 'linux-x64', '1.0.102'), { recursive: true });
  if (warm) writeFileSync(join(dir, 'pkg', 'linux-x64', '1.0.102', '.extraction-complete'), '');
  return dir;
}

async function runIn(options: Record<string, unknown>) {
  const sandbox = recordingSandbox();
  const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
  const result = await copilotHarness.run({ sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal, options });
  await sandbox.destroy();
  return { result, sandbox, run: sandbox.execs[sandbox.execs.length - 1]! };
}

describe('GitHub Copilot CLI harness, run in a recording sandbox', () => {
  it('runs copilot -p in the workspace against the session as a BYOK provider, offline, the key only in the environment', async () => {
    const { result, sandbox, run } = await runIn({ bin: BIN, maxPromptTokens: 50_000 });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(run.argv).toEqual([BIN, '-p', 'Create hello.txt', '--allow-all', '--no-ask-user', '--no-auto-update', '--no-color', '--output-format', 'json', '-C', sandbox.workspacePath]);
    expect(run.options.env).toMatchObject({
      HOME: '/home/agent', COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:9/s/r1/v1', COPILOT_PROVIDER_API_KEY: 'secret-key', COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_WIRE_API: 'completions', COPILOT_MODEL: 'policy', COPILOT_OFFLINE: 'true', COPILOT_AUTO_UPDATE: 'false', COPILOT_PROVIDER_MAX_PROMPT_TOKENS: '50000',
    });
    expect(JSON.stringify(run.argv)).not.toContain('secret-key');
    expect(sandbox.files.size).toBe(0);
  });

  it('shares a warm cache between rollouts (COPILOT_CACHE_HOME, bound read-only as a host path); a cold one it cannot warm is not passed', async () => {
    const warm = cacheFolder(true);
    const cold = cacheFolder(false);
    try {
      // The bin is not on this host: nothing can unpack into the cache here, it is used as it is.
      expect((await runIn({ bin: BIN, cacheDir: warm })).run.options.env).toMatchObject({ COPILOT_CACHE_HOME: warm });
      expect(copilotHarness.hostPaths!({ bin: BIN, cacheDir: warm })).toEqual(['/h/copilot', warm]);
      // Read-only and empty inside the sandbox, the CLI would fail on `mkdir pkg`: the rollout unpacks into its own HOME instead.
      expect((await runIn({ bin: BIN, cacheDir: cold })).run.options.env).not.toHaveProperty('COPILOT_CACHE_HOME');
      expect(cacheIsWarm(warm)).toBe(true);
      expect(cacheIsWarm(cold)).toBe(false);
    } finally {
      rmSync(warm, { recursive: true, force: true });
      rmSync(cold, { recursive: true, force: true });
    }
  });

  it('keeps the default cache beside the installed CLI, inside the install root the sandbox binds', () => {
    expect(defaultCacheDir(BIN)).toBe('/h/copilot/node_modules/.cache/copilot');
    expect(defaultCacheDir('copilot')).toBeUndefined();
    expect(copilotHarness.hostPaths!({ bin: BIN })).toEqual(['/h/copilot']);
  });

  it('refuses an option it does not know, naming it', async () => {
    await expect(runIn({ yolo: true })).rejects.toThrow(/yolo/);
  });
});

describe('GitHub Copilot CLI harness, the oracle\'s calls', () => {
  it('runs read_file, write_file, list_files and bash as bash in the workspace, quoting paths and content', () => {
    const call = (name: string, args: Record<string, unknown>) => copilotHarness.oracleCall!({ name, arguments: args });
    expect(call('write_file', { path: "it's.txt", content: 'hi' })).toEqual({ name: 'bash', arguments: { command: "printf '%s' 'hi' > 'it'\\''s.txt'", description: 'Write the file' } });
    expect(call('read_file', { path: 'a.txt' })).toEqual({ name: 'bash', arguments: { command: "cat -- 'a.txt'", description: 'Read the file' } });
    expect(call('list_files', {})).toEqual({ name: 'bash', arguments: { command: "ls -1 -- '.'", description: 'List the files' } });
    expect(call('bash', { command: 'true' })).toEqual({ name: 'bash', arguments: { command: 'true', description: 'Run a command' } });
  });
});

const copilot = harnessE2ePrerequisites('copilot');
describeIf(copilot.missing, 'clawgym doctor on the GitHub Copilot CLI harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed CLI at its bin; a bin that is not there is missing, with the install command', () => {
    const bin = 'bin' in copilot.cli ? copilot.cli.bin : '';
    const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: ${JSON.stringify([{ use: 'copilot', options: { bin } }])} };\n` }, 'clawgym-doctor-copilot-');
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const rows = (cfg: string) => {
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: cfg, encoding: 'utf8', timeout: 60_000 });
      return JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[];
    };
    expect(rows(dir).find((x) => x.what === 'harness copilot: CLI')).toMatchObject({ status: 'ok', detail: `GitHub Copilot CLI at ${bin}` });
    const gone = tempProject({ 'clawgym.config.mjs': 'export default { harnesses: [{ use: \'copilot\', options: { bin: \'/nonexistent/copilot\' } }] };\n' }, 'clawgym-doctor-copilot-');
    expect(rows(gone).find((x) => x.what === 'harness copilot: CLI')).toMatchObject({
      status: 'missing', detail: 'GitHub Copilot CLI: bin "/nonexistent/copilot" is not an executable file', install: 'npm i -D @github/copilot',
    });
  }, 120_000);

  it('reports its version (its --version run with the shared cache)', async () => {
    const bin = 'bin' in copilot.cli ? copilot.cli.bin : '';
    expect(await copilotHarness.version!({ bin })).toMatch(/^\d+\.\d+\.\d+$/);
  }, 60_000);
});
