'use strict';
// bench:async — what overlapping rollouts with training is worth when tools wait on I/O. The
// default config (cold-start checkpoint, embedded model, vocab-upper tasks, GRPO) with its engine
// served by two `clawgym engine serve` replicas (the SGLang protocol; weights synced from disk
// after every step) and agentloop tools that each wait a random 0.2–2 s, trained twice in this
// one invocation (fresh replicas for each): the synchronous loop, then `run.async: { maxStaleness: 2 }`.
// Each run's held-out Pass@1 is measured before its first step and after its last (the same
// test tasks); throughput and trainer idle time come from the steps' metrics.
//
//   npm run bench:async                  (BENCH_ASYNC_STEPS=10, BENCH_ASYNC_EVAL_TASKS=64)
const { spawn } = require('node:child_process');
const { readFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { pass1, diff } = require('../../scripts/lib/pass1');

const repo = join(__dirname, '..', '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');

function start(args, env = {}) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const io = { out: '' };
  child.stdout.on('data', (c) => { io.out += c; });
  const exited = new Promise((ok) => child.on('exit', (code) => ok(code)));
  return { child, io, exited };
}

async function replica() {
  const r = start(['engine', 'serve', '--config', join(repo, 'clawgym.config.ts')]);
  for (let i = 0; i < 600 && !/listening on (http:\/\/\S+)/.test(r.io.out); i++) await new Promise((ok) => setTimeout(ok, 100));
  const m = /listening on (http:\/\/\S+)/.exec(r.io.out);
  if (!m) throw new Error('clawgym engine serve did not start');
  return { ...r, url: m[1] };
}

async function train(mode) {
  // Fresh replicas for each run: both start from the default config's checkpoint.
  const replicas = [await replica(), await replica()];
  try { return await trainOn(mode, replicas); } finally { for (const r of replicas) r.child.kill('SIGTERM'); }
}

async function trainOn(mode, replicas) {
  const name = `bench-async-${mode}-${stamp}`;
  const env = { BENCH_ASYNC_REPLICAS: replicas.map((r) => r.url).join(','), ...(mode === 'async' ? { BENCH_ASYNC_STALENESS: '2' } : {}) };
  const t0 = Date.now();
  const run = start(['run', '--config', join(__dirname, 'config.ts'), '--name', name], env);
  run.child.stdout.on('data', (c) => process.stdout.write(`[${mode}] ${c}`));
  const code = await run.exited;
  if (code !== 0) throw new Error(`clawgym run (${mode}) failed with exit ${code}`);
  const runDir = join(repo, 'runs', name);
  const events = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const steps = events.filter((e) => e.kind === 'step');
  const evals = events.filter((e) => e.kind === 'eval');
  const sum = (k) => steps.reduce((n, e) => n + (e.values[k] ?? 0), 0);
  const seconds = sum('seconds');
  // Finished rollouts per minute of training: every rollout of a synchronous step; the pool's
  // finished rollouts in the asynchronous one (trained, infra or dropped as stale alike).
  const finished = mode === 'async' ? sum('async/rollouts_finished') : sum('rollouts');
  const at = (step) => pass1(join(runDir, 'eval', `step-${step}`, 'eval.json'));
  const before = at(evals[0].step);
  const after = at(evals[evals.length - 1].step);
  return {
    mode, runDir, minutes: (Date.now() - t0) / 60000, steps: steps.length,
    rolloutsPerMin: finished / (seconds / 60),
    idle: sum('seconds/rollouts') / seconds,
    dropped: sum('async/stale_dropped'), infra: sum('infra'), trained: sum('trained'),
    before, after, gain: diff(after, before),
    maxStaleness: Math.max(0, ...steps.map((e) => e.values['async/max_staleness_trained'] ?? 0)),
  };
}

(async () => {
  {
    const sync = await train('sync');
    const asy = await train('async');
    for (const r of [sync, asy]) {
      console.log(`${r.mode}: ${r.steps} steps in ${r.minutes.toFixed(1)} min; ${r.rolloutsPerMin.toFixed(1)} rollouts/min; trainer idle ${(100 * r.idle).toFixed(0)}%; trained ${r.trained}, infra ${r.infra}, dropped as stale ${r.dropped}, max staleness trained ${r.maxStaleness}; held-out Pass@1 ${(100 * r.before.p).toFixed(1)}% -> ${(100 * r.after.p).toFixed(1)}% (gain ${(100 * r.gain.d).toFixed(1)} ± ${(100 * r.gain.se).toFixed(1)} points, n=${r.after.n}); ${r.runDir}`);
    }
    const speedup = asy.rolloutsPerMin / sync.rolloutsPerMin;
    const gap = diff({ p: asy.gain.d, se: asy.gain.se }, { p: sync.gain.d, se: sync.gain.se });
    console.log(`speedup ${speedup.toFixed(2)}x (target >= 1.3); async gain minus sync gain ${(100 * gap.d).toFixed(1)} ± ${(100 * gap.se).toFixed(1)} points (must not be 2 SE below)`);
    console.log(`RESULT async rollouts_per_min_sync=${sync.rolloutsPerMin.toFixed(1)} rollouts_per_min_async=${asy.rolloutsPerMin.toFixed(1)} trainer_idle_sync=${sync.idle.toFixed(3)} trainer_idle_async=${asy.idle.toFixed(3)} speedup=${speedup.toFixed(2)} pass1_gain_sync=${sync.gain.d.toFixed(3)} pass1_gain_async=${asy.gain.d.toFixed(3)}`);
  }
})().catch((err) => { console.error(err.message); process.exit(1); });
