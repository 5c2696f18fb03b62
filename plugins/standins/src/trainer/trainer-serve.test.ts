import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * The remote path in separate processes, through the built CLI: `clawgym trainer serve` (the
 * embedded trainer behind the Tinker API) and `clawgym run` with engine and trainer both
 * `tinker` (plugins/engine-tinker/src/__fixtures__). Kill -9 of either process, then `--resume`, must lose
 * no step and repeat none: the optimiser steps the service applied to the run's model chain equal
 * the run's steps.
 */
const bin = resolve(__dirname, '../../../../core/bin/clawgym.js');
const fixtures = resolve(__dirname, '__fixtures__');
jest.setTimeout(240_000);

interface Proc { child: ChildProcess; out: () => string; exited: Promise<number | null> }
function start(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  return { child, out: () => out, exited: new Promise((ok) => child.on('exit', (code) => ok(code))) };
}
async function waitFor(p: Proc, pattern: RegExp, ms = 120_000): Promise<RegExpExecArray> {
  const until = Date.now() + ms;
  for (;;) {
    const m = pattern.exec(p.out());
    if (m) return m;
    if (p.child.exitCode !== null || Date.now() > until) throw new Error(`no ${pattern} in:\n${p.out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('clawgym trainer serve, and runs against it (built CLI, separate processes)', () => {
  const dirs: string[] = [];
  const procs: Proc[] = [];
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) { p.child.kill('SIGKILL'); await p.exited; }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function service(out: string, port = 0) {
    const p = start(['trainer', 'serve', '--config', join(fixtures, 'service.config.mjs'), '--port', String(port)], { CLAWGYM_TEST_OUT: out });
    procs.push(p);
    const url = (await waitFor(p, /Tinker API\) on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
    return { p, url, port: Number(new URL(url).port) };
  }
  const run = (out: string, url: string, steps: number, ...extra: string[]) => {
    const p = start(['run', '--config', join(fixtures, 'remote.config.mjs'), ...extra], { CLAWGYM_TEST_OUT: out, CLAWGYM_TEST_URL: url, CLAWGYM_TEST_STEPS: String(steps) });
    procs.push(p);
    return p;
  };
  const folder = () => { const d = mkdtempSync(join(tmpdir(), 'clawgym-remote-')); dirs.push(d); return d; };
  const runDir = (out: string) => join(out, 'remote');
  const optimizerSteps = (out: string) => (JSON.parse(readFileSync(join(runDir(out), 'checkpoint', 'tinker.json'), 'utf8')) as { optimizerSteps: number }).optimizerSteps;
  const stepEvents = (out: string) => readFileSync(join(runDir(out), 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; step: number }).filter((e) => e.kind === 'step').map((e) => e.step);
  const state = (out: string) => JSON.parse(readFileSync(join(runDir(out), 'state.json'), 'utf8')) as { step: number };

  it('prints its help: routes and an example', () => {
    const r = spawnSync(process.execPath, [bin, 'trainer', 'serve', '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: clawgym trainer serve [options]');
    expect(r.stdout).toMatch(/--port <port>/);
    expect(r.stdout).toMatch(/forward_backward \(cross_entropy, importance_sampling, ppo\)/);
  });

  it('a run whose engine and trainer are both tinker: trained and sampled in the service process, each step\'s calls on the weights the last step published', async () => {
    const out = folder();
    const { url } = await service(out);
    const r = run(out, url, 2);
    expect(await r.exited).toBe(0);
    expect(optimizerSteps(out)).toBe(2);
    expect(state(out).step).toBe(2);
    const modelId = (JSON.parse(readFileSync(join(runDir(out), 'checkpoint', 'tinker.json'), 'utf8')) as { modelId: string }).modelId;
    // SkyRL's layout: tar archives, the initial weights published before the first rollout (the service samples nothing else).
    expect(readdirSync(join(out, 'trainer-serve', modelId, 'sampler_weights')).sort()).toEqual(['step-0.tar.gz', 'step-1.tar.gz', 'step-2.tar.gz']);
    // Calls of step k were sampled by the service from the weights published after step k − 1.
    const calls = join(runDir(out), 'calls');
    const versions = new Map<number, Set<number>>();
    for (const f of readdirSync(calls)) {
      const step = Number(/^s(\d+)a/.exec(f)?.[1]);
      if (!step) continue;
      for (const line of readFileSync(join(calls, f), 'utf8').trim().split('\n')) {
        const rec = JSON.parse(line) as { policyVersion: number };
        versions.set(step, new Set([...(versions.get(step) ?? []), rec.policyVersion]));
      }
    }
    expect([...versions.entries()].sort(([a], [b]) => a - b).map(([s, v]) => [s, [...v]])).toEqual([[1, [0]], [2, [1]]]);
  });

  it('kill -9 of the orchestrator, then --resume: no step lost, none repeated', async () => {
    const out = folder();
    const { url } = await service(out);
    const first = run(out, url, 4);
    await waitFor(first, /step 2\/4/);
    first.child.kill('SIGKILL');
    await first.exited;
    const killedAt = state(out).step;
    expect(killedAt).toBeGreaterThanOrEqual(2);
    const second = run(out, url, 4, '--resume');
    expect(await second.exited).toBe(0);
    expect(state(out).step).toBe(4);
    expect(optimizerSteps(out)).toBe(4);
    // Each step reported once: the killed run's 1..killedAt, the resumed run's after it.
    expect(stepEvents(out)).toEqual([1, 2, 3, 4]);
  });

  it('kill -9 of the trainer service: the run stops naming the URL; restarted, --resume loses no step and repeats none', async () => {
    const out = folder();
    const svc = await service(out);
    const first = run(out, svc.url, 4);
    await waitFor(first, /step 2\/4/);
    svc.p.child.kill('SIGKILL');
    expect(await first.exited).toBe(1);
    expect(first.out()).toContain(`Tinker service POST ${svc.url}/api/v1/`);
    expect(first.out()).toContain(`curl ${svc.url}/api/v1/healthz`);
    const done = state(out).step;
    expect(done).toBeGreaterThanOrEqual(2);
    expect(optimizerSteps(out)).toBe(done);
    await service(out, svc.port); // same port and data folder: its checkpoints are on disk
    const second = run(out, svc.url, 4, '--resume');
    expect(await second.exited).toBe(0);
    expect(state(out).step).toBe(4);
    expect(optimizerSteps(out)).toBe(4);
  });

  it('a kill between a step\'s checkpoint and its state record: --resume does not train that step again', async () => {
    const out = folder();
    const { url } = await service(out);
    expect(await run(out, url, 2).exited).toBe(0);
    // As if killed after the step-2 checkpoint was swapped in and before state.json said so.
    writeFileSync(join(runDir(out), 'state.json'), JSON.stringify({ step: 1, stepStarts: { 1: 1, 2: 1 } }));
    expect(existsSync(join(runDir(out), 'checkpoint', 'clawgym-step.json'))).toBe(true);
    expect(await run(out, url, 3, '--resume').exited).toBe(0);
    expect(optimizerSteps(out)).toBe(3);
    expect(state(out).step).toBe(3);
  });
});
