import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseWireRequest } from '@clawgym/core';
import { describeIf, harnessE2ePrerequisites, recordedRequest, recordingSandbox, removeTempProjects, tempProject } from '@clawgym/core/testing';
import { grokHarness } from './index';

const BIN = '/h/grok/node_modules/@vibe-kit/grok-cli/dist/index.js';

describe('Grok CLI harness, run in a recording sandbox', () => {
  it('runs grok headless in the workspace under the given Node, the key and base URL only in the environment', async () => {
    const sandbox = recordingSandbox();
    try {
      const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
      const result = await grokHarness.run({
        sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal, options: { bin: BIN, node: '/h/node24/bin/node', maxToolRounds: 20 },
      });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const run = sandbox.execs[sandbox.execs.length - 1]!;
      expect(run.argv).toEqual(['/h/node24/bin/node', BIN, '-p', 'Create hello.txt', '-d', sandbox.workspacePath, '-m', 'policy', '--max-tool-rounds', '20']);
      expect(run.options.env).toMatchObject({ HOME: '/home/agent', GROK_API_KEY: 'secret-key', GROK_BASE_URL: 'http://127.0.0.1:9/s/r1/v1' });
      expect(JSON.stringify(run.argv)).not.toContain('secret-key');
      expect(grokHarness.hostPaths!({ bin: BIN, node: '/h/node24/bin/node' })).toEqual(['/h/grok', '/h/node24/bin']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(grokHarness.run({
        sandbox, endpoint: { baseUrl: 'http://x', apiKey: 'k', model: 'm' }, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: { yolo: true },
      })).rejects.toThrow(/yolo/);
    } finally {
      await sandbox.destroy();
    }
  });

  it('maps the oracle\'s calls to its tools: view_file, create_file, bash', () => {
    const call = (name: string, args: Record<string, unknown>) => grokHarness.oracleCall!({ name, arguments: args });
    expect(call('write_file', { path: 'a.txt', content: 'hi' })).toEqual({ name: 'create_file', arguments: { path: 'a.txt', content: 'hi' } });
    expect(call('read_file', { path: 'a.txt' })).toEqual({ name: 'view_file', arguments: { path: 'a.txt' } });
    expect(call('list_files', { path: '.' })).toEqual({ name: 'bash', arguments: { command: "ls -1 -- '.'" } });
    expect(call('bash', { command: 'true' })).toEqual({ name: 'bash', arguments: { command: 'true' } });
  });
});

describe('Grok CLI call classification, from recorded requests', () => {
  // Requests recorded from Grok CLI 0.0.34 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
  it('both calls of the e2e task are main; a call without tools would be a side call', () => {
    for (const name of ['grok-0.0.34-main', 'grok-0.0.34-call2']) {
      const parsed = parseWireRequest('openai-chat', recordedRequest(name).body);
      expect(parsed.conversation.tools.map((t) => t.name)).toEqual(['view_file', 'create_file', 'str_replace_editor', 'bash', 'search', 'create_todo_list', 'update_todo_list']);
      expect(grokHarness.classifyCall!(parsed.conversation, parsed.model, {})).toBe('main');
      expect(grokHarness.classifyCall!({ ...parsed.conversation, tools: [] }, parsed.model, {})).toBe('side');
    }
  });
});

const grok = harnessE2ePrerequisites('grok');
describeIf(grok.missing, 'clawgym doctor on the Grok CLI harness', () => {
  afterAll(removeTempProjects);
  it('finds the installed CLI at its bin; a bin that is not there is missing, with the install command', () => {
    const cli = resolve(__dirname, '../../../core/bin/clawgym.js');
    const row = (harness: unknown) => {
      const dir = tempProject({ 'clawgym.config.mjs': `export default { harnesses: [${JSON.stringify(harness)}] };\n` }, 'clawgym-doctor-grok-');
      const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
      return (JSON.parse(r.stdout) as { status: string; what: string; detail: string; install?: string }[]).find((x) => x.what === 'harness grok: CLI');
    };
    const bin = 'bin' in grok.cli ? grok.cli.bin : '';
    expect(row({ use: 'grok', options: { bin, node: 'bin' in grok.cli ? grok.cli.node : undefined } })).toMatchObject({ status: 'ok', detail: `Grok CLI at ${bin}` });
    expect(row({ use: 'grok', options: { bin: '/nonexistent/index.js' } })).toMatchObject({
      status: 'missing', detail: 'Grok CLI: bin "/nonexistent/index.js" is not an executable file', install: 'npm i -D @vibe-kit/grok-cli',
    });
  }, 120_000);
});
