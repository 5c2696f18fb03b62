import type { Harness } from '../contracts/harness';
import type { ExecResult, Sandbox, SandboxProvider, SandboxSpec } from '../contracts/sandbox';
import { resolveConfig } from '../config/load';
import { cliVersion } from '../3-harness/helpers';
import { definePlugin } from '../kernel/plugin';
import { z } from 'zod';
import { doctor } from './doctor';

/**
 * An image with only `openclaw` in it: a sandbox whose commands answer as that image would, and
 * that records what ran in it. On this machine neither CLI is installed (`cli-that-is-not-here`).
 */
function imageSandbox(log: { specs: SandboxSpec[]; argv: string[][]; destroyed: number }): SandboxProvider {
  return {
    name: 'fake-image',
    describeIsolation: async () => 'a fake image',
    systemOf: () => 'image fake:1',
    async create(spec): Promise<Sandbox> {
      log.specs.push(spec);
      const exec = async (argv: string[]): Promise<ExecResult> => {
        log.argv.push(argv);
        return argv[0] === '/usr/local/bin/openclaw' && argv[1] === '--version'
          ? { exitCode: 0, signal: null, stdout: 'OpenClaw 2026.7.1 (abc123)\n', stderr: '', timedOut: false }
          : { exitCode: 127, signal: null, stdout: '', stderr: `sh: ${argv[0]}: not found\n`, timedOut: false };
      };
      return { id: spec.rolloutId, workspaceHostPath: '/nonexistent', workspacePath: '/workspace', homePath: '/home/agent', modelBaseUrl: spec.modelEndpoint.url, exec, destroy: async () => { log.destroyed++; } } as unknown as Sandbox;
    },
    sweep: async () => ({ removed: [] }) as never,
  };
}

const cliHarness = (name: string, bin: string): Harness => ({
  name,
  wireFormat: 'openai-chat',
  // On this machine: never there.
  check: async () => ({ ok: false, reason: `${bin} is not on PATH` }),
  version: (_options, run) => cliVersion([bin, '--version'], run),
  run: async () => { throw new Error('not run'); },
} as Harness);

describe('clawgym doctor with a sandbox on a system of its own (an image)', () => {
  it('looks for each harness CLI inside one sandbox of that image, not on this machine: present there is ok, absent there is missing', async () => {
    const log = { specs: [] as SandboxSpec[], argv: [] as string[][], destroyed: 0 };
    const plugin = definePlugin({
      name: 'fake', options: z.strictObject({}),
      apply(api) {
        api.provide.sandbox(imageSandbox(log));
        api.provide.harness(cliHarness('in-image', '/usr/local/bin/openclaw'));
        api.provide.harness(cliHarness('not-in-image', 'claude'));
      },
    });
    const config = resolveConfig({ plugins: [plugin({})], sandbox: 'fake-image', harnesses: ['in-image', 'not-in-image'], engine: 'scripted' }, { rootDir: __dirname });
    const rows = await doctor(config);
    expect(rows.find((r) => r.what === 'harness in-image: CLI')).toMatchObject({ status: 'ok', detail: 'in-image 2026.7.1 inside the sandbox (image fake:1)' });
    expect(rows.find((r) => r.what === 'harness not-in-image: CLI')).toMatchObject({ status: 'missing', detail: expect.stringContaining('does not answer --version inside the sandbox (image fake:1)') });
    // One sandbox for both, given a model socket, destroyed afterwards; each CLI asked there.
    expect(log.specs).toHaveLength(1);
    expect(log.specs[0]!.modelEndpoint.socketPath).toMatch(/model\.sock$/);
    expect(log.argv).toEqual([['/usr/local/bin/openclaw', '--version'], ['claude', '--version']]);
    expect(log.destroyed).toBe(1);
  });

  it('a sandbox on this machine\'s own system keeps the harness\'s own check', async () => {
    const log = { specs: [] as SandboxSpec[], argv: [] as string[][], destroyed: 0 };
    const host = { ...imageSandbox(log), name: 'fake-host', systemOf: () => undefined };
    const plugin = definePlugin({
      name: 'fake', options: z.strictObject({}),
      apply(api) { api.provide.sandbox(host); api.provide.harness(cliHarness('in-image', '/usr/local/bin/openclaw')); },
    });
    const rows = await doctor(resolveConfig({ plugins: [plugin({})], sandbox: 'fake-host', harnesses: ['in-image'], engine: 'scripted' }, { rootDir: __dirname }));
    expect(rows.find((r) => r.what === 'harness in-image: CLI')).toMatchObject({ status: 'missing', detail: '/usr/local/bin/openclaw is not on PATH' });
    expect(log.specs).toHaveLength(0);
  });
});
