/** A task with its own image (and its own limits) through the runner. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Harness } from '../contracts/harness';
import type { SandboxProvider, SandboxSpec } from '../contracts/sandbox';
import type { Task } from '../contracts/task';
import { netnsAvailable, netnsSandboxProvider } from '../2-sandbox/netns';
import { describeIf, startScriptedProxy } from '../testing';
import { RolloutRunner } from './runner';

/** One model call, then write what the model's write_file call said. */
const agent: Harness = {
  name: 'agent', wireFormat: 'openai-chat', check: async () => ({ ok: true }),
  async run(ctx) {
    const code = `(async () => { const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
      headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [] }) });
      const msg = (await r.json()).choices[0].message;
      for (const c of msg.tool_calls ?? []) { const a = JSON.parse(c.function.arguments); require('fs').writeFileSync(a.path, a.content); } })()`;
    const r = await ctx.sandbox.exec([process.execPath, '-e', code], { env: { OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey }, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return { exitCode: r.exitCode, timedOut: r.timedOut, logTail: `${r.stdout}${r.stderr}` };
  },
};

const task = (id: string, withImage: boolean): Task => ({
  id, category: 'files', instruction: 'write out.txt',
  setup: async () => {},
  verify: async (ws) => { const ok = await ws.exists('out.txt'); return { reward: ok ? 1 : 0, pass: ok, details: '' }; },
  limits: { cpus: 1, memoryMb: 256 },
  ...(withImage ? { environment: { contextDir: '/nonexistent/environment', hash: 'ab'.repeat(32), source: `task ${id}` } } : {}),
});

const ns = netnsAvailable();

describeIf(ns.ok ? undefined : ns.reason, 'tasks with their own image in the runner', () => {
  let p: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  beforeAll(async () => {
    p = await startScriptedProxy(() => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'ok' } }] }));
    socketPath = join(mkdtempSync(join(tmpdir(), 'runner-env-')), 'proxy.sock');
    await p.proxy.listenUnix(socketPath);
  });
  afterAll(async () => { await p?.close(); });

  /** netns sandboxes, as a provider that does or does not claim to run images; records each spec. */
  const provider = (supportsEnvironments: boolean) => {
    const specs: SandboxSpec[] = [];
    const inner = netnsSandboxProvider();
    const wrapped: SandboxProvider = {
      name: supportsEnvironments ? 'images' : 'plain', supportsEnvironments,
      describeIsolation: inner.describeIsolation, sweep: inner.sweep,
      create: async (spec) => { specs.push(spec); const { environment: _ignored, ...rest } = spec; return inner.create(rest); },
    };
    return { wrapped, specs };
  };
  const runner = (sandboxes: SandboxProvider) => new RolloutRunner({
    runId: 'env', proxy: p.proxy, socketPath, sandboxes, concurrency: 2, timeoutMs: 20_000, infraRetries: 0, limits: { pids: 64, memoryMb: 1024 },
  });

  it('refuses the batch before any sandbox when the provider runs no images, naming the tasks and the Docker sandbox', async () => {
    const { wrapped, specs } = provider(false);
    const jobs = [task('plain', false), task('needs-image', true)].map((t, i) => ({ rolloutId: `r${i}`, step: 0, task: t, harness: agent }));
    await expect(runner(wrapped).run(jobs)).rejects.toMatchObject({
      code: 'CLAWGYM_SANDBOX_UNSUPPORTED', message: expect.stringContaining('needs-image'), hint: expect.stringContaining("sandbox: 'docker'"),
    });
    expect(specs).toEqual([]);
  });

  it("hands the image to a provider that runs images, with the task's limits over the run's and the run's folder for logs", async () => {
    const { wrapped, specs } = provider(true);
    const [report] = await runner(wrapped).run([{ rolloutId: 'img', step: 0, task: task('needs-image', true), harness: agent }]);
    expect(report).toMatchObject({ outcome: 'ok', reward: 1 });
    expect(specs[0]).toMatchObject({ environment: { hash: 'ab'.repeat(32) }, limits: { pids: 64, cpus: 1, memoryMb: 256 }, logDir: join(socketPath, '..') });
  });
});
