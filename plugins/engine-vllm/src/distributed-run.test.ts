import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { removeTempProjects, tempProject } from '@clawgym/core/testing';

/*
 * The distributed layout as separate processes, here: two `clawgym engine serve` replicas and
 * `clawgym run` (rollouts through the agentloop harness in local sandboxes, the embedded trainer
 * publishing a folder per version) with `engine: sglang` over both replicas and asynchronous
 * rollouts (maxStaleness 1, the `freshest` policy, whose bound is firm: no trained rollout lags more
 * than 1 version). One replica is killed with SIGKILL mid-run: its rollouts are
 * infrastructure failures and the run goes on with the other. Then the run itself is killed
 * with SIGKILL and resumed: every step is trained once, no rollout group twice.
 */
const bin = resolve(__dirname, '../../../core/bin/clawgym.js');
const model = { dModel: 16, layers: 1, heads: 2, context: 768 };
const STEPS = 6;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  removeTempProjects();
});

/** Spawn the CLI; `lines` gets its stdout as it comes. */
function cli(dir: string, args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const io = { out: '', err: '' };
  child.stdout!.on('data', (d) => { io.out += d; });
  child.stderr!.on('data', (d) => { io.err += d; });
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  return { child, io, exited };
}
const until = async (cond: () => boolean, what: string, ms = 90_000) => {
  for (const t = Date.now(); !cond(); await new Promise((ok) => setTimeout(ok, 50))) if (Date.now() - t > ms) throw new Error(`timed out waiting for ${what}`);
};

describe('distributed run: orchestrator + two engine-serve replicas, asynchronous rollouts', () => {
  it('survives kill -9 of a replica mid-run and resumes after kill -9 of the run with nothing trained twice', async () => {
    const dir = tempProject({
      'engine.config.mjs': `export default { engine: { use: 'embedded', options: { model: ${JSON.stringify(model)} } } };\n`,
    }, 'clawgym-distributed-');
    const replicas = [cli(dir, ['engine', 'serve', '--config', 'engine.config.mjs']), cli(dir, ['engine', 'serve', '--config', 'engine.config.mjs'])];
    for (const r of replicas) await until(() => /listening on http/.test(r.io.out), `an engine server (${r.io.err})`);
    const urls = replicas.map((r) => /listening on (http:\/\/\S+)/.exec(r.io.out)![1]!);
    const { writeFileSync } = await import('node:fs');
    // The SGLang client with the embedded model's own (compact) template, as bench/async/config.ts
    // does: core's `sglang` engine needs a Hugging Face tokenizer folder, which this model has not.
    writeFileSync(join(dir, 'clawgym.config.mjs'), [
      "import { byteChatMl, definePlugin, z } from '@clawgym/core';",
      "import { createTokenIdEngine } from '@clawgym/engine-vllm';",
      "import { CompactTemplate } from '@clawgym/engine-embedded';",
      'const remote = definePlugin({ name: "test:remote-embedded", options: z.strictObject({}), apply(api) {',
      '  api.provide.engine({ name: "remote-embedded", async create(o) {',
      '    const { tokenizer } = byteChatMl();',
      '    return createTokenIdEngine({ flavor: "sglang", ...o, tokenizer, chatTemplate: new CompactTemplate(tokenizer, { systemChars: 0, toolResultChars: 1500 }) });',
      '  } });',
      '} });',
      `export default { plugins: [remote()], ...${JSON.stringify({
        name: 'dist',
        engine: { use: 'remote-embedded', options: { replicas: urls, model: 'embedded', contextLength: model.context, syncRetries: 2, syncBackoffMs: 50, probeIntervalMs: 500 } },
        trainer: { use: 'embedded', options: { model } },
        harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write'] } }], reporters: [],
        run: { steps: STEPS, tasksPerStep: 2, groupSize: 2, concurrency: 4, evalEvery: 0, evalTasks: 2, infraRetries: 0, rolloutTimeoutMs: 30_000, outDir: 'runs', async: { maxStaleness: 1, policy: 'freshest' } },
      })} };`,
    ].join('\n'));

    const run = cli(dir, ['run']);
    const stepsSeen = (io: { out: string }) => [...io.out.matchAll(new RegExp(`step (\\d+)/${STEPS}:`, 'g'))].map((m) => Number(m[1]));
    await until(() => stepsSeen(run.io).length >= 1 || run.child.exitCode !== null, `step 1 (${run.io.err})`);
    // One replica dies mid-run, while it answers a call (its /metrics says one runs): killed at
    // a moment it served nothing, the orchestrator could route around it before any rollout
    // noticed, and there would be no infrastructure failure to see.
    const running = async () => {
      const text = await fetch(`${urls[0]}/metrics`).then((r) => r.text()).catch(() => '');
      return Number(/^vllm:num_requests_running\S* (\S+)$/m.exec(text)?.[1] ?? 0);
    };
    for (const t = Date.now(); (await running()) === 0; await new Promise((ok) => setTimeout(ok, 2))) {
      if (Date.now() - t > 60_000 || run.child.exitCode !== null) throw new Error(`replica 0 served no call within 60 s of step 1: ${run.io.out}\n${run.io.err}`);
    }
    replicas[0]!.child.kill('SIGKILL');
    await until(() => stepsSeen(run.io).length >= 3 || run.child.exitCode !== null, `step 3 (${run.io.err})`);
    if (run.child.exitCode !== null) throw new Error(`run exited ${run.child.exitCode}: ${run.io.out}\n${run.io.err}`);
    run.child.kill('SIGKILL'); // the run dies mid-step
    await run.exited;

    const runDir = join(dir, 'runs', 'dist');
    const before = JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as { step: number; unitsDone: number[] };
    const resumed = cli(dir, ['run', '--resume']);
    expect(await resumed.exited).toBe(0);

    const state = JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')) as { step: number; unitsDone: number[] };
    expect(state.step).toBe(STEPS);
    expect(new Set(state.unitsDone).size).toBe(state.unitsDone.length); // no group trained twice
    expect(state.unitsDone.slice(0, before.unitsDone.length)).toEqual(before.unitsDone);
    const steps = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.kind === 'step');
    // Each step once: the ones finished before the kill, then the rest (the killed one redone).
    expect(steps.map((e) => e.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    for (const e of steps) expect(e.values['async/max_staleness_trained']).toBeLessThanOrEqual(1);
    // Rollouts really ran and trained (not all failures).
    expect(steps.reduce((n, e) => n + e.values.trained, 0)).toBeGreaterThanOrEqual(STEPS);
    // The killed replica's rollouts: infrastructure failures, never scored.
    expect(steps.reduce((n, e) => n + e.values.infra, 0)).toBeGreaterThan(0);
    // The engines served the weights the trainer published: records carry versions past 0.
    const versions = new Set<number>();
    for (const f of readdirSync(join(runDir, 'calls'))) for (const l of readFileSync(join(runDir, 'calls', f), 'utf8').trim().split('\n')) if (l) versions.add(JSON.parse(l).policyVersion);
    expect(Math.max(...versions)).toBeGreaterThan(0);
    expect(existsSync(join(runDir, 'weights'))).toBe(true);
    replicas[1]!.child.kill('SIGTERM');
  }, 240_000);
});
