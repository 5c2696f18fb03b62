import { recordingSandbox as makeRecordingSandbox, createTestKernel, type RecordingSandbox } from '@clawgym/core/testing';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openclaw from './index';

// Each recording sandbox has a temp folder; destroy them all at the end.
const sandboxes: RecordingSandbox[] = [];
const recordingSandbox = (...args: Parameters<typeof makeRecordingSandbox>) => { const sb = makeRecordingSandbox(...args); sandboxes.push(sb); return sb; };
afterAll(async () => { for (const sb of sandboxes) await sb.destroy(); });

const endpoint = { baseUrl: 'http://127.0.0.1:4000/s/r-2', apiKey: 'sk-oc', model: 'policy' };

describe('openclaw harness', () => {
  it('writes a per-rollout config pointing at the session and runs `agent exec`', async () => {
    const kernel = await createTestKernel({ plugins: [openclaw()] });
    const harness = kernel.registry.get('harness', 'openclaw');
    const sandbox = recordingSandbox();
    await harness.run({
      sandbox, endpoint, instruction: 'write b.txt', timeoutMs: 90_000, signal: new AbortController().signal,
      options: { node: '/opt/node24/bin/node', entry: '/opt/openclaw/openclaw.mjs' },
    });
    const config = JSON.parse(sandbox.files.get('/home/agent/openclaw.json')!);
    expect(config.models.providers.p).toMatchObject({ baseUrl: 'http://127.0.0.1:4000/s/r-2/v1', apiKey: 'sk-oc', api: 'openai-completions' });
    expect(config.agents.defaults).toEqual({ model: { primary: 'p/m' } });
    expect(sandbox.execs.at(-1)!.argv).toEqual([
      '/opt/node24/bin/node', '/opt/openclaw/openclaw.mjs', 'agent', 'exec', 'write b.txt',
      '--config', '/home/agent/openclaw.json', '--cwd', '/workspace', '--json', '--timeout', '90',
    ]);
  });

  it('passes its compaction settings and context window to OpenClaw', async () => {
    const kernel = await createTestKernel({ plugins: [openclaw()] });
    const sandbox = recordingSandbox();
    await kernel.registry.get('harness', 'openclaw').run({
      sandbox, endpoint, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal,
      options: { contextWindow: 20_000, compaction: { midTurnPrecheck: { enabled: true } } },
    });
    const config = JSON.parse(sandbox.files.get('/home/agent/openclaw.json')!);
    expect(config.agents.defaults.compaction).toEqual({ midTurnPrecheck: { enabled: true } });
    expect(config.models.providers.p.models[0].contextWindow).toBe(20_000);
  });

  it('reads exit code 2 as OpenClaw\'s own timeout', async () => {
    const kernel = await createTestKernel({ plugins: [openclaw()] });
    const result = await kernel.registry.get('harness', 'openclaw').run({
      sandbox: recordingSandbox((argv) => (argv.includes('agent') ? { exitCode: 2 } : {})),
      endpoint, instruction: 'x', timeoutMs: 1000, signal: new AbortController().signal, options: {},
    });
    expect(result.timedOut).toBe(true);
  });

  it('finds the CLI a config names by its entry, as the rollouts run it (a bin key is not an option of OpenClaw)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openclaw-check-'));
    try {
      const entry = join(dir, 'openclaw.mjs');
      writeFileSync(entry, '#!/usr/bin/env node\n');
      chmodSync(entry, 0o755);
      const kernel = await createTestKernel({ plugins: [openclaw()] });
      const harness = kernel.registry.get('harness', 'openclaw');
      await expect(harness.check({ entry, node: process.execPath })).resolves.toMatchObject({ ok: true });
      const gone = await harness.check({ entry: join(dir, 'missing.mjs'), node: process.execPath });
      expect(gone).toMatchObject({ ok: false });
      expect(gone.reason).toContain('missing.mjs');
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
