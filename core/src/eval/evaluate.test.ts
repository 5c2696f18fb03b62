import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Harness } from '../contracts/harness';
import type { SandboxProvider } from '../contracts/sandbox';
import type { Task } from '../contracts/task';
import { resolveConfig } from '../config/load';
import type { PluginApi } from '../contracts/plugin';
import { composeRun } from '../run/compose';
import { recordingSandbox } from '../testing';
import { evaluate, type EvalOptions } from './evaluate';

const repo = resolve(__dirname, '../../..');

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'evaluate-test-')); dirs.push(d); return d; };

/** A sandbox double whose model URL is the proxy's loopback session URL, so an in-process harness can call it. */
const loopbackSandboxes: SandboxProvider = {
  name: 'loopback', describeIsolation: async () => 'none (test double)', sweep: async () => ({ removed: [] }),
  create: async (spec) => ({ ...recordingSandbox(), modelBaseUrl: spec.modelEndpoint.url }),
};

/** Makes two calls; with `holdAfterFirst`, waits after the first until the rollout is cancelled. */
const twoCalls = (holdAfterFirst: { onFirst: () => void } | undefined): Harness => ({
  name: 'two', wireFormat: 'openai-chat', check: async () => ({ ok: true }),
  async run(ctx) {
    const call = () => fetch(`${ctx.endpoint.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${ctx.endpoint.apiKey}` }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }] }) }).then((r) => r.text());
    await call();
    if (holdAfterFirst) {
      holdAfterFirst.onFirst();
      await new Promise((resolve) => { if (ctx.signal?.aborted) resolve(undefined); else ctx.signal?.addEventListener('abort', resolve, { once: true }); });
      return { exitCode: 1, timedOut: false, logTail: 'cancelled' };
    }
    await call();
    return { exitCode: 0, timedOut: false, logTail: '' };
  },
});
const task: Task = { id: 't', category: 'c', instruction: 'x', setup: async () => {}, verify: async () => ({ reward: 1, pass: true, details: 'ok' }) };
/** Evaluate the two tasks through `harness` in a run container composed as `clawgym eval` composes one. */
async function evaluateIn(runDir: string, harness: Harness, extra: Partial<EvalOptions> = {}, run: Record<string, number> = {}) {
  const s = await composeRun({
    config: resolveConfig({
      engine: 'scripted', sandbox: 'loopback', harnesses: [harness.name], tasks: ['builtin'],
      plugins: [{ name: 'test:loopback', apply: (api: PluginApi) => { api.provide.sandbox(loopbackSandboxes); api.provide.harness(harness); } }],
      run: { concurrency: 2, rolloutTimeoutMs: 10_000, infraRetries: 0, ...run },
    }, { rootDir: repo }),
    purpose: 'eval', name: 'ev', runDir, taskLimits: {}, logger: { info: () => {}, warn: () => {} },
  });
  try {
    return await evaluate({ scope: s.container, tasks: [task, { ...task, id: 'u' }], harnesses: [{ harness }], k: 1, ...extra });
  } finally {
    await s.dispose();
  }
}
const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap' || r === 'PipeServerWrap').length;

describe('evaluate, killable like training', () => {
  it('removes a socket file left by a killed evaluation instead of failing with EADDRINUSE', async () => {
    const runDir = tmp();
    writeFileSync(join(runDir, 'proxy.sock'), ''); // what a kill -9 leaves behind
    const report = await evaluateIn(runDir, twoCalls(undefined));
    expect(report.rows.find((r) => r.category === 'all')).toMatchObject({ samples: 2, pass1: 1 });
  });

  it('stops its proxy when it fails after starting it, so the process can exit', async () => {
    const runDir = tmp();
    mkdirSync(join(runDir, 'proxy.sock', 'in-the-way'), { recursive: true }); // cannot be removed or listened on
    const before = servers();
    await expect(evaluateIn(runDir, twoCalls(undefined))).rejects.toThrow();
    expect(servers()).toBe(before);
  });

  it('an evaluation restarted after an interruption runs under fresh ids: no call file mixes two attempts', async () => {
    const runDir = tmp();
    const abort = new AbortController();
    let first = 0;
    const held = twoCalls({ onFirst: () => { if (++first === 2) abort.abort(); } });
    const interrupted = await evaluateIn(runDir, held, { signal: abort.signal });
    expect(interrupted.reports.every((r) => r.outcome === 'infra-error')).toBe(true);
    const resumed = await evaluateIn(runDir, twoCalls(undefined));
    expect(resumed.reports.map((r) => r.rolloutId).sort()).toEqual(['eval-two-0-0-a2', 'eval-two-1-0-a2']);
    expect(resumed.rows.find((r) => r.category === 'all')).toMatchObject({ samples: 2, pass1: 1, infra: 0 });
    const files = readdirSync(join(runDir, 'calls')).sort();
    expect(files).toEqual(['eval-two-0-0-a2.jsonl', 'eval-two-0-0.jsonl', 'eval-two-1-0-a2.jsonl', 'eval-two-1-0.jsonl']);
    const indices = (f: string) => readFileSync(join(runDir, 'calls', f), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { callIndex: number }).callIndex);
    expect(indices('eval-two-0-0.jsonl')).toEqual([0]);
    expect(indices('eval-two-0-0-a2.jsonl')).toEqual([0, 1]);
    expect(JSON.parse(readFileSync(join(runDir, 'eval.json'), 'utf8')).rollouts).toHaveLength(2);
  });

  describe('a harness stuck before its first model call', () => {
    /** Calls and passes, except on the task whose instruction is "hang": there it never calls, until stopped or out of time. */
    const stuckOn = (hang: 'until-stopped' | 'until-time-limit'): Harness => ({
      name: 'stuck', wireFormat: 'openai-chat', check: async () => ({ ok: true }),
      async run(ctx) {
        if (ctx.instruction !== 'hang') return twoCalls(undefined).run(ctx);
        if (hang === 'until-time-limit') {
          await new Promise((resolve) => setTimeout(resolve, ctx.timeoutMs));
          return { exitCode: null, timedOut: true, logTail: 'still loading plugins' };
        }
        await new Promise((resolve) => { if (ctx.signal?.aborted) resolve(undefined); else ctx.signal?.addEventListener('abort', resolve, { once: true }); });
        return { exitCode: null, timedOut: false, logTail: 'still loading plugins' };
      },
    });
    const hangTasks = [task, { ...task, id: 'u', instruction: 'hang', verify: async () => ({ reward: 0, pass: false, details: 'nothing done' }) }];

    it('past the start-up limit is stopped and counted as an infra failure of class harness-start, outside Pass@1', async () => {
      const runDir = tmp();
      const report = await evaluateIn(runDir, stuckOn('until-stopped'), { tasks: hangTasks }, { startupTimeoutMs: 200, rolloutTimeoutMs: 60_000 });
      const hung = report.reports.find((r) => r.request.taskId === 'u')!;
      expect(hung).toMatchObject({ outcome: 'infra-error', infraClass: 'harness-start', calls: 0 });
      expect(hung.reward).toBeNaN();
      expect(hung.details).toMatch(/no model call within the start-up limit of 200 ms.*still loading plugins/);
      // Scored as a timeout it would be pass1 0.5 over 2 samples; as infra it is outside the figure.
      expect(report.rows.find((r) => r.category === 'all')).toMatchObject({ samples: 1, pass1: 1, infra: 1, faults: { 'harness-start': 1 } });
      const written = JSON.parse(readFileSync(join(runDir, 'eval.json'), 'utf8')) as { rollouts: { taskId: string; outcome: string; infraClass?: string }[] };
      expect(written.rollouts.find((r) => r.taskId === 'u')).toMatchObject({ outcome: 'infra-error', infraClass: 'harness-start' });
    });

    it('that reaches its time limit before the start-up limit with no call at all is harness-start too, not a timeout', async () => {
      const report = await evaluateIn(tmp(), stuckOn('until-time-limit'), { tasks: hangTasks }, { rolloutTimeoutMs: 300 });
      expect(report.reports.find((r) => r.request.taskId === 'u')).toMatchObject({ outcome: 'infra-error', infraClass: 'harness-start' });
      expect(report.rows.find((r) => r.category === 'all')).toMatchObject({ samples: 1, pass1: 1, infra: 1 });
    });
  });
});
