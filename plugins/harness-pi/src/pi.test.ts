import { recordingSandbox } from '@clawgym/core/testing';
import { piHarness } from './index';

describe('Pi harness, run in a recording sandbox', () => {
  it('writes models.json and settings.json under its HOME and runs pi headless, offline, with the session key only in the environment', async () => {
    const sandbox = recordingSandbox();
    try {
      const endpoint = { baseUrl: 'http://127.0.0.1:9/s/r1', apiKey: 'secret-key', model: 'policy' };
      const result = await piHarness.run({
        sandbox, endpoint, instruction: 'Create hello.txt', timeoutMs: 1000, signal: new AbortController().signal,
        options: { bin: '/h/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js', node: '/h/node24/bin/node', reserveTokens: 4000 },
      });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      const models = JSON.parse(sandbox.files.get('/home/agent/.pi/agent/models.json')!) as { providers: Record<string, Record<string, unknown>> };
      expect(models.providers.clawgym).toMatchObject({ baseUrl: 'http://127.0.0.1:9/s/r1/v1', api: 'openai-completions', apiKey: 'CLAWGYM_API_KEY' });
      expect(JSON.parse(sandbox.files.get('/home/agent/.pi/agent/settings.json')!)).toEqual({ enableInstallTelemetry: false, compaction: { enabled: true, reserveTokens: 4000 } });
      const run = sandbox.execs[sandbox.execs.length - 1]!;
      expect(run.argv).toEqual(['/h/node24/bin/node', '/h/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js', '--provider', 'clawgym', '--model', 'policy', '--mode', 'json', '--no-session', '-p', 'Create hello.txt']);
      expect(run.options.env).toMatchObject({ HOME: '/home/agent', PI_OFFLINE: '1', CLAWGYM_API_KEY: 'secret-key' });
      // The key is read from the environment: never on the command line or in a file.
      expect(JSON.stringify(run.argv)).not.toContain('secret-key');
      expect([...sandbox.files.values()].join('')).not.toContain('secret-key');
      expect(piHarness.hostPaths!({ bin: '/h/pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js', node: '/h/node24/bin/node' })).toEqual(['/h/pi', '/h/node24/bin']);
    } finally {
      await sandbox.destroy();
    }
  });

  it('refuses an option it does not know, naming it', async () => {
    const sandbox = recordingSandbox();
    try {
      await expect(piHarness.run({
        sandbox, endpoint: { baseUrl: 'http://x', apiKey: 'k', model: 'm' }, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: { yolo: true },
      })).rejects.toThrow(/yolo/);
    } finally {
      await sandbox.destroy();
    }
  });
});
