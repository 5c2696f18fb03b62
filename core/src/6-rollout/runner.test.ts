import { mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Harness } from '../contracts/harness';
import type { SandboxProvider } from '../contracts/sandbox';
import type { Task, VerifyContext } from '../contracts/task';
import { netnsAvailable, netnsSandboxProvider } from '../2-sandbox/netns';
import { describeIf, startScriptedProxy } from '../testing';
import type { ScriptContext, ScriptedTurn } from '../4-proxy/engine/scripted';
import { RolloutRunner, type RolloutJob } from './runner';
import { fingerprintOf } from '../3-harness/fingerprint/fingerprint';
import { ClawGymError, ErrorCodes } from '../errors';

/** A harness that is a real process running `code` (Node) with the session's OpenAI endpoint. */
const processHarness = (name: string, code: string): Harness => ({
  name, wireFormat: 'openai-chat', check: async () => ({ ok: true }),
  async run(ctx) {
    const r = await ctx.sandbox.exec([process.execPath, '-e', code], {
      env: { OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey }, timeoutMs: ctx.timeoutMs, signal: ctx.signal,
    });
    return { exitCode: r.exitCode, timedOut: r.timedOut, logTail: `${r.stdout}${r.stderr}` };
  },
});

// One model call; then act on a write_file tool call, or crash, or hang.
const CALL = `const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [] }) });
  if (!r.ok) process.exit(1);
  const msg = (await r.json()).choices[0].message;`;
const agent = processHarness('agent', `(async () => { ${CALL}
  for (const c of msg.tool_calls ?? []) { const a = JSON.parse(c.function.arguments); require('fs').writeFileSync(a.path, a.content); }
  process.exit(0); })()`);
const crasher = processHarness('crasher', `(async () => { ${CALL} process.exit(3); })()`);
// Sends one request the proxy refuses (content: a 200-level nested tool schema), then exits 1 as a harness does on an API error.
const REFUSED = `const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: process.env.CONTENT }], tools: [{ type: 'function', function: { name: 't', parameters: JSON.parse('{"a":'.repeat(200) + '1' + '}'.repeat(200)) } }] }) });`;
const refusedThenDies = processHarness('refused', `(async () => { ${REFUSED} process.exit(r.ok ? 0 : 1); })()`);
const refusedThenRecovers = processHarness('recovers', `(async () => { { ${REFUSED} if (r.ok) process.exit(5); } ${CALL}
  for (const c of msg.tool_calls ?? []) { const a = JSON.parse(c.function.arguments); require('fs').writeFileSync(a.path, a.content); }
  process.exit(0); })()`);
// The proxy itself fails (a template that throws while rendering): a 500 before generation, then the harness exits 1.
const proxyFails = processHarness('proxy-fails', `(async () => { const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'EXPLODE' }] }) });
  process.exit(r.status === 500 ? 1 : 0); })()`);
const hanger = processHarness('hanger', `(async () => { ${CALL} setInterval(() => {}, 1000); })()`);
// Stuck at start-up: never asks for a completion (a CLI waiting on a prompt, a lock, a network it lacks).
const stuckAtStart = processHarness('stuck', `console.log('loading plugins'); setInterval(() => {}, 1000);`);

const writeTask = (id: string, opts: Partial<Task> = {}): Task => ({
  id, category: 'files', instruction: 'write out.txt',
  setup: async (ws) => { await ws.writeFile('in.txt', 'x'); },
  verify: async (ws) => {
    const ok = (await ws.exists('out.txt')) && (await ws.readFile('out.txt')).toString() === 'ok';
    return { reward: ok ? 1 : 0, pass: ok, details: ok ? 'out.txt correct' : 'out.txt missing or wrong' };
  },
  ...opts,
});

function script({ sessionId }: ScriptContext): ScriptedTurn {
  if (sessionId.startsWith('engine-down')) return { failBefore: 'engine 500' };
  if (sessionId.startsWith('final')) return { text: 'The answer is 42.' };
  return { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'ok' } }] };
}

const ns = netnsAvailable();

describeIf(ns.ok ? undefined : ns.reason, 'rollout runner (real processes in network-namespace sandboxes)', () => {
  let p: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  beforeAll(async () => {
    p = await startScriptedProxy(script);
    // A rendering bug, standing for any exception the proxy raises before generation.
    const render = p.engine.chatTemplate.render.bind(p.engine.chatTemplate);
    p.engine.chatTemplate.render = (c) => {
      if (JSON.stringify(c.messages).includes('EXPLODE')) throw new RangeError('Maximum call stack size exceeded');
      return render(c);
    };
    socketPath = join(mkdtempSync(join(tmpdir(), 'runner-sock-')), 'proxy.sock');
    await p.proxy.listenUnix(socketPath);
  });
  afterAll(async () => {
    await p.close();
    if (socketPath) rmSync(dirname(socketPath), { recursive: true, force: true });
  });

  const runner = (sandboxes: SandboxProvider = netnsSandboxProvider(), extra = {}) => new RolloutRunner({
    runId: 'test', proxy: p.proxy, socketPath, sandboxes, concurrency: 3, timeoutMs: 8000, infraRetries: 1, ...extra,
  });

  it("gives the sandbox the task's workspace path and the verifier the final message and conversation", async () => {
    const asked: (string | undefined)[] = [];
    const base = netnsSandboxProvider();
    // The netns kit cannot place a workspace: this one records the path asked for and runs without it.
    const placing: SandboxProvider = { ...base, create: async ({ workspacePath, ...spec }) => { asked.push(workspacePath); return base.create(spec); } };
    let seen: VerifyContext | undefined;
    const task = writeTask('final', { workspacePath: '/root/.openclaw/workspace', verify: async (_ws, context) => { seen = context; return { reward: 1, pass: true, details: 'ok' }; } });
    const [report] = await runner(placing).run([{ rolloutId: 'final-1', step: 1, task, harness: agent }]);
    expect(report).toMatchObject({ outcome: 'ok', reward: 1 });
    expect(asked).toEqual(['/root/.openclaw/workspace']);
    // Where its milliseconds went, each step apart (bench:harness-overhead prints them): reading the
    // call records is its own phase, not counted as grading.
    expect(Object.keys(report!.phases ?? {})).toEqual(['sandboxMs', 'setupMs', 'harnessMs', 'recordsMs', 'verifyMs']);
    const phases = Object.values(report!.phases ?? {}) as number[];
    expect(phases.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(report!.durationMs);
    expect(seen?.sandbox).toBeDefined();
    expect(seen?.finalMessage).toBe('The answer is 42.');
    expect(seen?.conversation?.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(seen?.conversation?.[0]?.parts).toEqual([{ type: 'text', text: 'go' }]);
  }, 30_000);

  it('classifies ok, harness crash, harness hang, engine failing and sandbox failure; the run goes on', async () => {
    let creates = 0;
    const base = netnsSandboxProvider();
    const flaky: SandboxProvider = { ...base, create: async (spec) => { if (spec.rolloutId === 'flaky-sandbox' && creates++ === 0) throw new Error('no space left'); return base.create(spec); } };
    const jobs: RolloutJob[] = [
      { rolloutId: 'ok-1', step: 1, task: writeTask('t1'), harness: agent },
      { rolloutId: 'crash-1', step: 1, task: writeTask('t2'), harness: crasher },
      { rolloutId: 'hang-1', step: 1, task: writeTask('t3', { timeLimitMs: 1500 }), harness: hanger },
      { rolloutId: 'engine-down-1', step: 1, task: writeTask('t4'), harness: agent },
      { rolloutId: 'flaky-sandbox', step: 1, task: writeTask('t6'), harness: agent },
    ];
    const started = Date.now();
    const reports = await runner(flaky).run(jobs);
    const by = Object.fromEntries(reports.map((r) => [r.rolloutId, r]));
    expect(reports).toHaveLength(5);
    expect(by['ok-1']).toMatchObject({ outcome: 'ok', reward: 1, attempts: 1, calls: 1 });
    expect(by['crash-1']).toMatchObject({ outcome: 'harness-error', reward: 0, attempts: 1 });
    expect(by['hang-1']).toMatchObject({ outcome: 'timeout', attempts: 1 });
    // Infrastructure failures are retried, carry no reward (never a 0), and say why.
    expect(by['engine-down-1']).toMatchObject({ outcome: 'infra-error', attempts: 2 });
    expect(by['engine-down-1']!.reward).toBeNaN();
    expect(by['engine-down-1']!.details).toMatch(/^engine or proxy failed: engine 500/);
    expect(by['flaky-sandbox']).toMatchObject({ outcome: 'ok', attempts: 2, sessionId: 'flaky-sandbox.retry1', reward: 1 });
    expect(Date.now() - started).toBeLessThan(20_000);
    // Every attempt's calls were recorded under its own session.
    expect((await p.proxy.records('ok-1'))).toHaveLength(1);
  }, 60_000);

  it('a verifier that throws an error of its own is its plugin\'s bug: named with suite and plugin, its stack kept, not retried', async () => {
    const task = writeTask('t5', { verify: async () => { throw new TypeError('verifier bug'); } });
    const suiteOf = (t: Task) => (t === task ? 'task suite "files" (plugin "files-plugin", clawgym-plugin-files@2.0.0)' : undefined);
    const [report] = await runner(undefined, { suiteOf }).run([{ rolloutId: 'bad-verifier-1', step: 1, task, harness: agent }]);
    const by = { 'bad-verifier-1': report };
    expect(by['bad-verifier-1']).toMatchObject({
      outcome: 'infra-error', infraClass: 'verifier', attempts: 1,
      details: 'the verifier of task "t5" in task suite "files" (plugin "files-plugin", clawgym-plugin-files@2.0.0) threw TypeError: verifier bug. This is a bug in the plugin, not the agent\'s doing or the machine\'s: the rollout is neither scored nor retried',
      fault: { code: 'CLAWGYM_VERIFIER_BUG', stack: expect.stringMatching(/^TypeError: verifier bug\n\s+at .*runner\.test\.ts/) },
    });
    expect(by['bad-verifier-1']!.reward).toBeNaN();
  }, 30_000);

  it('retries a verifier whose machinery failed (a ClawGymError it raised) as an infrastructure failure', async () => {
    const task = writeTask('t7', { verify: async () => { throw new ClawGymError(ErrorCodes.VERIFIER_FAILED, 'reward.sh exited 1'); } });
    const [report] = await runner().run([{ rolloutId: 'verifier-machinery-1', step: 1, task, harness: agent }]);
    expect(report).toMatchObject({ outcome: 'infra-error', infraClass: 'verifier', attempts: 2, details: 'verifier failed: reward.sh exited 1' });
    expect(report!.fault).toBeUndefined();
  }, 30_000);

  it('fingerprints what the harness sends: its first main call (not a side call before it), the sandbox paths masked, the CLI version asked once', async () => {
    // A title-like side call (no tools) first, then the agent, whose system prompt names its workspace.
    const code = `(async () => { const post = (body) => fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
      headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await post({ model: 'm', messages: [{ role: 'system', content: 'Name this session.' }, { role: 'user', content: 'go' }] });
      const tools = [{ type: 'function', function: { name: 'write_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
      const r = await post({ model: 'm', messages: [{ role: 'system', content: 'You work in ' + process.cwd() + '.' }, { role: 'user', content: 'go' }], tools });
      const msg = (await r.json()).choices[0].message;
      for (const c of msg.tool_calls ?? []) { const a = JSON.parse(c.function.arguments); require('fs').writeFileSync(a.path, a.content); }
      process.exit(0); })()`;
    let asked = 0;
    const titled: Harness = {
      ...processHarness('titled', code),
      classifyCall: (c) => (c.tools.length ? 'main' : 'title'),
      version: async () => { asked++; return '9.9.9'; },
    };
    const reports = await runner().run([1, 2].map((i) => ({ rolloutId: `fp-${i}`, step: 1, task: writeTask(`f${i}`), harness: titled })));
    expect(reports.map((r) => r.outcome)).toEqual(['ok', 'ok']);
    const [a, b] = reports.map((r) => r.fingerprint!);
    expect(a).toMatchObject({ harness: 'titled', cliVersion: '9.9.9', tools: { write_file: expect.stringMatching(/^[0-9a-f]{16}$/) } });
    // Two rollouts, two workspaces, one fingerprint; and not the side call's prompt.
    expect(b).toEqual(a);
    expect(a!.system).toBe(fingerprintOf({ system: 'You work in <path>.', tools: [] }, 'titled').system);
    expect(asked).toBe(1);
  }, 60_000);

  it('asks the CLI\'s version while the harness runs, not after it (off the rollout\'s path)', async () => {
    let running = false;
    const probed: Harness = {
      ...agent,
      name: 'probed',
      async run(ctx) { running = true; try { return await agent.run(ctx); } finally { running = false; } },
      // Answers only once the harness has started: asked after it ended, the version would read "late".
      version: async () => { for (let i = 0; i < 200 && !running; i++) await new Promise((r) => setTimeout(r, 10)); return running ? '1.0.0' : 'late'; },
    };
    const [report] = await runner().run([{ rolloutId: 'probed-1', step: 1, task: writeTask('p1'), harness: probed }]);
    expect(report!.outcome).toBe('ok');
    expect(report!.fingerprint?.cliVersion).toBe('1.0.0');
  }, 60_000);

  it('a harness that fails after the proxy refused or failed its request is an infra failure; one that recovers is scored', async () => {
    const jobs: RolloutJob[] = [
      { rolloutId: 'refused-1', step: 1, task: writeTask('r1'), harness: refusedThenDies },
      { rolloutId: 'recovers-1', step: 1, task: writeTask('r2'), harness: refusedThenRecovers },
      { rolloutId: 'proxy-fails-1', step: 1, task: writeTask('r3'), harness: proxyFails },
    ];
    const by = Object.fromEntries((await runner(undefined, { infraRetries: 0 }).run(jobs)).map((r) => [r.rolloutId, r]));
    expect(by['refused-1']).toMatchObject({ outcome: 'infra-error', details: 'the harness failed (exit 1) after the proxy refused its request: 400: request body nests 204 levels deep; the limit is 128' });
    expect(by['refused-1']!.reward).toBeNaN();
    expect({ outcome: by['recovers-1']!.outcome, details: by['recovers-1']!.details }).toEqual({ outcome: 'ok', details: 'out.txt correct' });
    expect(by['proxy-fails-1']).toMatchObject({ outcome: 'infra-error' });
    expect(by['proxy-fails-1']!.details).toBe('engine or proxy failed: the proxy failed a request: 500: Maximum call stack size exceeded');
  }, 60_000);

  it('a harness with no model call within the start-up limit is stopped as an infra failure of class harness-start; one that called and then hangs is a timeout', async () => {
    // The limits leave a loaded machine seconds to start a sandbox and print (the stuck harness's
    // "loading plugins" must be in the details; the hanging one must have made its call).
    const jobs: RolloutJob[] = [
      { rolloutId: 'stuck-1', step: 1, task: writeTask('s1', { timeLimitMs: 30_000 }), harness: stuckAtStart },
      { rolloutId: 'hang-after-call-1', step: 1, task: writeTask('s2', { timeLimitMs: 6000 }), harness: hanger },
      { rolloutId: 'stuck-to-limit-1', step: 1, task: writeTask('s3', { timeLimitMs: 1000 }), harness: stuckAtStart },
    ];
    const by = Object.fromEntries((await runner(undefined, { infraRetries: 0, startupTimeoutMs: 5000 }).run(jobs)).map((r) => [r.rolloutId, r]));
    expect(by['stuck-1']).toMatchObject({ outcome: 'infra-error', infraClass: 'harness-start', calls: 0 });
    expect(by['stuck-1']!.details).toMatch(/no model call within the start-up limit of 5000 ms.*loading plugins/);
    expect(by['stuck-1']!.reward).toBeNaN();
    expect(by['hang-after-call-1']).toMatchObject({ outcome: 'timeout', calls: 1 });
    expect(by['hang-after-call-1']!.infraClass).toBeUndefined();
    // Out of time before the start-up limit, still without a call: the same fault.
    expect(by['stuck-to-limit-1']).toMatchObject({ outcome: 'infra-error', infraClass: 'harness-start' });
  }, 60_000);

  it('stops on cancel: running harnesses are killed, sandboxes destroyed, nothing new starts', async () => {
    const created: string[] = [];
    const base = netnsSandboxProvider();
    const tracking: SandboxProvider = { ...base, create: async (spec) => { const s = await base.create(spec); created.push(s.workspaceHostPath); return s; } };
    const abort = new AbortController();
    const jobs: RolloutJob[] = Array.from({ length: 6 }, (_, i) => ({ rolloutId: `cancel-${i}`, step: 1, task: writeTask(`c${i}`, { timeLimitMs: 30_000 }), harness: hanger }));
    setTimeout(() => abort.abort(), 1500);
    const started = Date.now();
    const reports = await runner(tracking, { concurrency: 2 }).run(jobs, abort.signal);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(reports.length).toBeLessThanOrEqual(2);
    expect(created.length).toBe(2);
    for (const dir of created) await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  }, 30_000);
});
