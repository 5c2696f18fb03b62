import { recordingSandbox as makeRecordingSandbox, createTestKernel, type RecordingSandbox } from '@clawgym/core/testing';
import claudeCode, { claudeCodeHarness } from './index';

// Each recording sandbox has a temp folder; destroy them all at the end.
const sandboxes: RecordingSandbox[] = [];
const recordingSandbox = (...args: Parameters<typeof makeRecordingSandbox>) => { const sb = makeRecordingSandbox(...args); sandboxes.push(sb); return sb; };
afterAll(async () => { for (const sb of sandboxes) await sb.destroy(); });

const endpoint = { baseUrl: 'http://127.0.0.1:4000/s/r-1', apiKey: 'sk-secret', model: 'policy' };

describe('claude-code harness', () => {
  it('runs claude headless against the rollout\'s proxy session, as docs/harnesses.md measured', async () => {
    const kernel = await createTestKernel({ plugins: [claudeCode()] });
    const harness = kernel.registry.get('harness', 'claude-code');
    const sandbox = recordingSandbox((argv) => (argv[0] === 'claude' ? { stdout: '{"result":"ok"}' } : {}));
    const result = await harness.run({ sandbox, endpoint, instruction: 'write a.txt', timeoutMs: 60_000, signal: new AbortController().signal, options: {} });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    const run = sandbox.execs.at(-1)!;
    expect(run.argv).toEqual(['claude', '-p', 'write a.txt', '--output-format', 'json', '--dangerously-skip-permissions', '--tools', 'Bash,Read,Write,Edit']);
    expect(run.options.env).toMatchObject({
      HOME: '/home/agent', TMPDIR: '/home/agent/tmp', IS_SANDBOX: '1',
      ANTHROPIC_BASE_URL: endpoint.baseUrl, ANTHROPIC_API_KEY: 'sk-secret',
      ANTHROPIC_MODEL: 'policy', ANTHROPIC_SMALL_FAST_MODEL: 'policy',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    });
    expect(run.options).toMatchObject({ stdin: '', timeoutMs: 60_000 });
    expect(sandbox.execs[0]!.argv).toEqual(['mkdir', '-p', '/home/agent/tmp']);
  });

  it('validates per-rollout options', async () => {
    const kernel = await createTestKernel({ plugins: [claudeCode()] });
    const harness = kernel.registry.get('harness', 'claude-code');
    await expect(harness.run({ sandbox: recordingSandbox(), endpoint, instruction: '', timeoutMs: 1, signal: new AbortController().signal, options: { tool: [] } }))
      .rejects.toThrow('Did you mean "tools"?');
  });
});
