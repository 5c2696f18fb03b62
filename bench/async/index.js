'use strict';
// bench:async — what overlapping rollouts with training is worth when tools wait on I/O. The
// default config (cold-start checkpoint, embedded model, vocab-upper tasks, GRPO) with its engine
// served by two `clawgym engine serve` replicas (the SGLang protocol; weights synced from disk
// after every step) and agentloop tools that each wait a random 0.2–2 s, trained twice in this
// one invocation (fresh replicas for each): the synchronous loop, then `run.async: { maxStaleness: 2 }`.
// Each run's held-out Pass@1 is measured before its first step and after its last, on the same
// test tasks; throughput and trainer idle time come from the steps' metrics. Both runs start
// from the same checkpoint, so their two first evaluations measure one policy: pooled, they are
// the baseline of both gains. Gains and the async − sync gap are paired by task (each task's
// difficulty is shared by every evaluation of it, so it does not enter the error).
//
// A third run trains with `run.async.policy: 'fair'` (the groups that started first, none dropped
// for staleness): each asynchronous run's RESULT adds the mean length (wall seconds) of its
// trained rollouts over that of every rollout it finished (trained or dropped as stale), 1.0 being
// no bias against long tasks: `length_ratio_before` (the `freshest` policy, the default before `fair`) and
// `length_ratio_trained_vs_generated` (`fair`), beside each one's speed-up and gain.
//
//   npm run bench:async                  (BENCH_ASYNC_STEPS=30, BENCH_ASYNC_EVAL_TASKS=400: ~18 min, three runs)
//   BENCH_ASYNC_SMALL=1 npm run bench:async   (about a minute: the rollout pool with a stand-in runner; small.js)
//   BENCH_ASYNC_MIXED=1 npm run bench:async   (the full mode on vocab-upper and vocab-upper-slow: long and short tasks of equal difficulty)
//   BENCH_ASYNC_FROM=sync=DIR,async=DIR,fair=DIR npm run bench:async   (the figures of three run folders made before: no training)
const { spawn } = require('node:child_process');
const { readFileSync, statSync } = require('node:fs');
const { loadavg } = require('node:os');
const { join } = require('node:path');
const { pass1, outcomesByTask, pairedDiff } = require('../../scripts/lib/pass1');

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
  const env = { BENCH_ASYNC_REPLICAS: replicas.map((r) => r.url).join(','), ...(mode !== 'sync' ? { BENCH_ASYNC_STALENESS: '2' } : {}), ...(mode === 'fair' ? { BENCH_ASYNC_POLICY: 'fair' } : {}) };
  const t0 = Date.now();
  const run = start(['run', '--config', join(__dirname, 'config.ts'), '--name', name], env);
  run.child.stdout.on('data', (c) => process.stdout.write(`[${mode}] ${c}`));
  const code = await run.exited;
  if (code !== 0) throw new Error(`clawgym run (${mode}) failed with exit ${code}`);
  return summarise(mode, join(repo, 'runs', name), (Date.now() - t0) / 60000);
}

/** One run's figures, read from its folder (`minutes`: its wall time). */
function summarise(mode, runDir, minutes) {
  const events = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const steps = events.filter((e) => e.kind === 'step');
  const evals = events.filter((e) => e.kind === 'eval');
  const sum = (k) => steps.reduce((n, e) => n + (e.values[k] ?? 0), 0);
  const seconds = sum('seconds');
  // Finished rollouts per minute of training: every rollout of a synchronous step; the pool's
  // finished rollouts in the asynchronous one (trained, infra or dropped as stale alike).
  const finished = mode !== 'sync' ? sum('async/rollouts_finished') : sum('rollouts');
  const evalFile = (step) => join(runDir, 'eval', `step-${step}`, 'eval.json');
  const first = evalFile(evals[0].step);
  const last = evalFile(evals[evals.length - 1].step);
  return {
    mode, runDir, minutes, steps: steps.length,
    rolloutsPerMin: finished / (seconds / 60),
    // Rollouts the steps consumed (trained, or infra) per minute: leaves out those still in the pool at the end.
    consumedPerMin: sum('rollouts') / (seconds / 60),
    idle: sum('seconds/rollouts') / seconds,
    dropped: sum('async/stale_dropped'), infra: sum('infra'), trained: sum('trained'),
    before: pass1(first), after: pass1(last), beforeByTask: outcomesByTask(first), afterByTask: outcomesByTask(last),
    maxStaleness: Math.max(0, ...steps.map((e) => e.values['async/max_staleness_trained'] ?? 0)),
    // Mean length of trained rollouts over that of every finished one (trained or dropped): 1.0 is no bias.
    lengthRatio: mode === 'sync' ? 1 : (sum('async/len_trained/seconds') / sum('async/len_trained/n')) / (sum('async/len_generated/seconds') / sum('async/len_generated/n')),
  };
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const points = (x) => `${(100 * x.d).toFixed(1)} ± ${(100 * x.se).toFixed(1)} points`;

/**
 * BENCH_ASYNC_FROM=sync=DIR,async=DIR,fair=DIR: the figures of three run folders this bench made
 * before (or that were trained apart, with its config and environment), without training again.
 */
function fromFolders(spec) {
  const dirs = Object.fromEntries(spec.split(',').map((kv) => kv.split('=')));
  return ['sync', 'async', 'fair'].map((mode) => {
    const dir = dirs[mode];
    if (!dir) throw new Error(`BENCH_ASYNC_FROM names no ${mode} run folder (sync=DIR,async=DIR,fair=DIR)`);
    // Its wall time: from its frozen config (written as it started) to its last event.
    const events = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
    return summarise(mode, dir, (JSON.parse(events[events.length - 1]).time - statSync(join(dir, 'config.json')).mtimeMs) / 60000);
  });
}

(async () => {
  if (process.env.BENCH_ASYNC_SMALL) return require('./small')();
  const loadBefore = load();
  const [sync, asy, fair] = process.env.BENCH_ASYNC_FROM ? fromFolders(process.env.BENCH_ASYNC_FROM) : [await train('sync'), await train('async'), await train('fair')];
  const gainFair = pairedDiff(fair.afterByTask, [sync.beforeByTask, asy.beforeByTask, fair.beforeByTask]);
  console.log(`fair: ${fair.steps} steps in ${fair.minutes.toFixed(1)} min; ${fair.rolloutsPerMin.toFixed(1)} rollouts/min finished; trainer idle ${(100 * fair.idle).toFixed(0)}%; dropped as stale ${fair.dropped}, max staleness trained ${fair.maxStaleness}; held-out Pass@1 ${(100 * fair.before.p).toFixed(1)}% -> ${(100 * fair.after.p).toFixed(1)}% (gain ${points(gainFair)}); length trained / finished ${fair.lengthRatio.toFixed(3)} (freshest: ${asy.lengthRatio.toFixed(3)}); ${fair.runDir}`);
  // One policy, evaluated twice: the pooled baseline of both gains (and a check of the noise).
  const baseline = [sync.beforeByTask, asy.beforeByTask];
  const gain = (r) => pairedDiff(r.afterByTask, baseline);
  const gainSync = gain(sync);
  const gainAsync = gain(asy);
  const gap = pairedDiff(asy.afterByTask, sync.afterByTask);
  for (const [r, g] of [[sync, gainSync], [asy, gainAsync]]) {
    console.log(`${r.mode}: ${r.steps} steps in ${r.minutes.toFixed(1)} min; ${r.rolloutsPerMin.toFixed(1)} rollouts/min finished (${r.consumedPerMin.toFixed(1)} consumed by steps); trainer idle ${(100 * r.idle).toFixed(0)}%; trained ${r.trained}, infra ${r.infra}, dropped as stale ${r.dropped}, max staleness trained ${r.maxStaleness}; held-out Pass@1 ${(100 * r.before.p).toFixed(1)}% -> ${(100 * r.after.p).toFixed(1)}% (gain over the pooled baseline ${points(g)}, n=${g.n}); ${r.runDir}`);
  }
  const speedup = asy.rolloutsPerMin / sync.rolloutsPerMin;
  const twice = pairedDiff(asy.beforeByTask, sync.beforeByTask);
  console.log(`the checkpoint evaluated twice: ${points(twice)} apart (noise; n=${twice.n})`);
  console.log(`speedup ${speedup.toFixed(2)}x (target >= 1.3; ${(asy.consumedPerMin / sync.consumedPerMin).toFixed(2)}x in rollouts consumed by steps); async gain minus sync gain ${points(gap)}, ${gap.d >= -2 * gap.se ? 'not' : 'MORE than'} 2 SE below (paired by task)`);
  console.log(`load average (1, 5, 15 min): ${loadBefore} at the start, ${load()} at the end`);
  console.log(`RESULT async rollouts_per_min_sync=${sync.rolloutsPerMin.toFixed(1)} rollouts_per_min_async=${asy.rolloutsPerMin.toFixed(1)} trainer_idle_sync=${sync.idle.toFixed(3)} trainer_idle_async=${asy.idle.toFixed(3)} speedup=${speedup.toFixed(2)} pass1_gain_sync=${gainSync.d.toFixed(3)} pass1_gain_async=${gainAsync.d.toFixed(3)} gain_diff=${gap.d.toFixed(3)} gain_diff_se=${gap.se.toFixed(3)} steps=${sync.steps} held_out=${gap.n} speedup_fair=${(fair.rolloutsPerMin / sync.rolloutsPerMin).toFixed(2)} pass1_gain_fair=${gainFair.d.toFixed(3)} length_ratio_before=${asy.lengthRatio.toFixed(3)} length_ratio_trained_vs_generated=${fair.lengthRatio.toFixed(3)}`);
})().catch((err) => { console.error(err.message); process.exit(1); });
