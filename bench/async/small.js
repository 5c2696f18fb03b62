'use strict';
// bench:async's small mode (BENCH_ASYNC_SMALL=1, about a minute): the asynchronous loop's rollout
// pool (core's RolloutPool, as built) driven by a stand-in runner and trainer, so the policies'
// scheduling is measured without training a model. Tasks come in two kinds of equal difficulty
// (reward 1 with probability 1/2 for both): short ones make 3 model calls, long ones 12, each call
// waiting a random 20–60 ms (tools on I/O); every call records the policy version it was served
// by, as the proxy does. The trainer's step takes 50 ms and publishes the next version; 16
// rollouts at once, maxStaleness 1 (BENCH_ASYNC_TRAIN_MS, BENCH_ASYNC_CONCURRENCY,
// BENCH_ASYNC_STALENESS): long rollouts then outlast more than one trainer step, as a 40-turn
// agent does beside a 5-turn one. Three
// loops in one invocation, the same task draws for each: synchronous (the reference), `freshest`
// (the default: freshest groups, stale rollouts dropped) and `fair` (the groups that started
// first, none dropped; new groups held back while the oldest running one lags). It measures
// finished rollouts per minute (the speed-up over synchronous; and trained rollouts per minute,
// where dropped ones count for nothing), the mean length of trained
// rollouts over that of every finished one (1.0: no bias), drops and the staleness trained.
// It cannot measure the learning gain: the full mode (`npm run bench:async`) does.
const { join } = require('node:path');
const { RolloutPool, rolloutVersion } = require(join(__dirname, '..', '..', 'core', 'dist', 'run', 'async', 'rollout-pool.js'));

const STEPS = Number(process.env.BENCH_ASYNC_STEPS ?? 40);
const TASKS_PER_STEP = 4;
const GROUP = 4;
const CONCURRENCY = Number(process.env.BENCH_ASYNC_CONCURRENCY ?? 16);
const MAX_STALENESS = Number(process.env.BENCH_ASYNC_STALENESS ?? 1);
const TRAIN_MS = Number(process.env.BENCH_ASYNC_TRAIN_MS ?? 50);
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** A seeded generator (mulberry32): the same draws for every loop. */
function rng(seed) {
  let a = seed >>> 0;
  return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

/** Unit `u`'s kind: long or short at random (seeded by the unit), half each. */
const isLong = (u) => rng(1000 + u)() < 0.5;

function runner(version) {
  return {
    async run(jobs, signal) {
      const out = [];
      for (const job of jobs) {
        const r = rng(job.seed);
        const started = Date.now();
        const records = [];
        for (let c = 0; c < (job.long ? 12 : 3) && !signal?.aborted; c++) {
          await sleep(20 + 40 * r());
          records.push({ callIndex: c, policyVersion: version(), outputIds: [] });
        }
        out.push({ rolloutId: job.rolloutId, sessionId: job.rolloutId, outcome: signal?.aborted ? 'infra-error' : 'ok', reward: r() < 0.5 ? 1 : 0, records, attempts: 1, calls: records.length, details: '', durationMs: Date.now() - started, request: { long: job.long } });
      }
      return out;
    },
  };
}

const jobsOf = async (u) => Array.from({ length: GROUP }, (_, g) => ({ rolloutId: `u${u}-${g}`, seed: u * 100 + g, long: isLong(u) }));

async function synchronous() {
  let version = 0;
  const run = runner(() => version);
  const t0 = Date.now();
  let finished = 0;
  for (let step = 0; step < STEPS; step++) {
    const jobs = (await Promise.all(Array.from({ length: TASKS_PER_STEP }, (_, t) => jobsOf(step * TASKS_PER_STEP + t)))).flat();
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next < jobs.length) { await run.run([jobs[next++]]); finished++; } }));
    await sleep(TRAIN_MS);
    version++;
  }
  return { mode: 'sync', perMin: finished / ((Date.now() - t0) / 60000), ratio: 1, dropped: 0, maxStaleness: 0 };
}

async function asynchronous(policy) {
  let version = 0;
  const pool = new RolloutPool({ runner: runner(() => version), concurrency: CONCURRENCY, jobsOf, done: new Set(), maxOutstanding: (1 + MAX_STALENESS) * TASKS_PER_STEP, policy, maxStaleness: MAX_STALENESS, version: () => version });
  const t0 = Date.now();
  pool.start();
  const generated = [];
  const trained = [];
  let dropped = 0;
  let maxStaleness = 0;
  for (let step = 0; step < STEPS; step++) {
    const batch = await pool.take(TASKS_PER_STEP, version, MAX_STALENESS);
    const reports = batch.units.flatMap((u) => u.reports);
    for (const r of reports) { trained.push(r); maxStaleness = Math.max(maxStaleness, version - rolloutVersion(r)); }
    generated.push(...reports, ...batch.dropped);
    dropped += batch.dropped.length;
    await sleep(TRAIN_MS);
    version++;
  }
  const seconds = (Date.now() - t0) / 1000;
  const finished = pool.finished;
  await pool.stop();
  const mean = (rs) => rs.reduce((n, r) => n + r.durationMs, 0) / Math.max(1, rs.length);
  const longShare = (rs) => rs.filter((r) => r.request.long).length / Math.max(1, rs.length);
  return { mode: policy, perMin: finished / (seconds / 60), trainedPerMin: trained.length / (seconds / 60), ratio: mean(trained) / mean(generated), longGenerated: longShare(generated), longTrained: longShare(trained), dropped, maxStaleness, trained: trained.length, generated: generated.length };
}

module.exports = async function small() {
  const sync = await synchronous();
  const before = await asynchronous('freshest');
  const fair = await asynchronous('fair');
  for (const r of [before, fair]) {
    console.log(`${r.mode}: ${r.perMin.toFixed(0)} rollouts/min finished (${(r.perMin / sync.perMin).toFixed(2)}x synchronous), ${r.trainedPerMin.toFixed(0)} trained (${(r.trainedPerMin / sync.perMin).toFixed(2)}x); trained ${r.trained} of ${r.generated} finished, ${r.dropped} dropped as stale, max staleness trained ${r.maxStaleness}; long tasks ${(100 * r.longGenerated).toFixed(0)}% of finished, ${(100 * r.longTrained).toFixed(0)}% of trained; mean length trained / finished ${r.ratio.toFixed(3)}`);
  }
  console.log(`synchronous: ${sync.perMin.toFixed(0)} rollouts/min; learning gains are not measured in the small mode (the full mode trains the model)`);
  console.log(`RESULT async mode=small steps=${STEPS} rollouts_per_min_sync=${sync.perMin.toFixed(0)} speedup_before=${(before.perMin / sync.perMin).toFixed(2)} speedup=${(fair.perMin / sync.perMin).toFixed(2)} trained_speedup_before=${(before.trainedPerMin / sync.perMin).toFixed(2)} trained_speedup=${(fair.trainedPerMin / sync.perMin).toFixed(2)} length_ratio_before=${before.ratio.toFixed(3)} length_ratio_trained_vs_generated=${fair.ratio.toFixed(3)} dropped_before=${before.dropped} dropped=${fair.dropped} max_staleness_before=${before.maxStaleness} max_staleness=${fair.maxStaleness}`);
};
