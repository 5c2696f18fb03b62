import type { ModelCallRecord } from '../../contracts/records';
import type { RolloutJob, RolloutReport } from '../../6-rollout/runner';
import { Rng } from '../../util/rng';
import { RolloutPool, rolloutSpan, rolloutVersion } from './rollout-pool';

/**
 * A runner whose rollouts take a random 5–60 ms and make three calls, each recorded with the
 * policy version the "engine" serves when the call is made (as the proxy records it).
 */
function fakeRunner(version: () => number, seed = 1) {
  const rng = new Rng(seed);
  let running = 0;
  let maxRunning = 0;
  const started: { id: string; version: number }[] = [];
  return {
    started,
    maxRunning: () => maxRunning,
    async run(jobs: readonly RolloutJob[], signal?: AbortSignal): Promise<RolloutReport[]> {
      const out: RolloutReport[] = [];
      for (const job of jobs) {
        running++;
        maxRunning = Math.max(maxRunning, running);
        started.push({ id: job.rolloutId, version: version() });
        const records: ModelCallRecord[] = [];
        for (let c = 0; c < 3 && !signal?.aborted; c++) {
          await new Promise((ok) => setTimeout(ok, rng.int(2, 20)));
          records.push({ rolloutId: job.rolloutId, callIndex: c, policyVersion: version() } as ModelCallRecord);
        }
        running--;
        out.push({ rolloutId: job.rolloutId, sessionId: job.rolloutId, outcome: signal?.aborted ? 'infra-error' : 'ok', reward: 1, records, attempts: 1, calls: records.length, details: '', durationMs: 1, request: {} as never });
      }
      return out;
    },
  };
}

const jobsOf = (group: number) => async (u: number) => Array.from({ length: group }, (_, g) => ({ rolloutId: `u${u}-${g}`, step: 0, task: {} as never, harness: {} as never }));

describe('asynchronous rollouts', () => {
  it('never trains a rollout more than maxStaleness versions old, counts what it drops, and keeps rollouts running while the trainer steps', async () => {
    for (const maxStaleness of [0, 1, 2]) {
      let version = 0;
      const runner = fakeRunner(() => version, 7 + maxStaleness);
      const tasksPerStep = 2;
      const pool = new RolloutPool({ runner, concurrency: 4, jobsOf: jobsOf(3), done: new Set(), maxOutstanding: (1 + maxStaleness) * tasksPerStep });
      pool.start();
      const trainedUnits = new Set<number>();
      let startedDuringSteps = 0;
      for (let step = 1; step <= 8; step++) {
        const batch = (await pool.take(tasksPerStep, version, maxStaleness))!;
        expect(batch.units).toHaveLength(tasksPerStep);
        for (const u of batch.units) {
          expect(trainedUnits.has(u.index)).toBe(false); // nothing trained twice
          trainedUnits.add(u.index);
          for (const r of u.reports) expect(version - rolloutVersion(r)!).toBeLessThanOrEqual(maxStaleness);
        }
        for (const r of batch.dropped) expect(version - rolloutVersion(r)!).toBeGreaterThan(maxStaleness);
        // The trainer's step: rollouts keep going meanwhile (they are not waiting for it).
        const before = runner.started.length;
        await new Promise((ok) => setTimeout(ok, 30));
        startedDuringSteps += runner.started.length - before;
        version++;
      }
      await pool.stop();
      expect(startedDuringSteps).toBeGreaterThan(0);
      expect(runner.maxRunning()).toBeLessThanOrEqual(4);
      // With room to run ahead, rollouts start under older weights than the trainer's.
      if (maxStaleness > 0) expect(runner.started.some((s) => s.version < Math.max(...runner.started.map((x) => x.version)))).toBe(true);
    }
  });

  it('drops stale rollouts and whole stale groups, and trains the freshest groups first', async () => {
    let version = 0;
    const runner = fakeRunner(() => version, 3);
    const pool = new RolloutPool({ runner, concurrency: 6, jobsOf: jobsOf(2), done: new Set(), maxOutstanding: 6 });
    pool.start();
    const first = (await pool.take(1, version, 0))!;
    await new Promise((ok) => setTimeout(ok, 150)); // the other groups finish, all at version 0
    version = 5;
    const second = (await pool.take(1, version, 2))!;
    // Everything ready was served by version 0, five behind: dropped, counted, the groups given up.
    expect(second.dropped.length).toBeGreaterThanOrEqual(2);
    expect(second.droppedUnits.length).toBeGreaterThanOrEqual(1);
    for (const u of second.units) for (const r of u.reports) expect(5 - rolloutVersion(r)!).toBeLessThanOrEqual(2);
    expect(second.units[0]!.index).not.toBe(first.units[0]!.index);
    await pool.stop();
  });

  it('bounds how many versions one rollout may span (maxVersionSpan): weight updates land between its calls', async () => {
    // Unit u's rollouts: a first call at version 0, then u % 3 weight updates land before the next two.
    const runner = {
      async run(jobs: readonly RolloutJob[]): Promise<RolloutReport[]> {
        return jobs.map((job) => {
          const u = Number(/^u(\d+)-/.exec(job.rolloutId)![1]);
          const records = [0, u % 3, u % 3].map((v, c) => ({ rolloutId: job.rolloutId, callIndex: c, policyVersion: v }) as ModelCallRecord);
          return { rolloutId: job.rolloutId, sessionId: job.rolloutId, outcome: 'ok', reward: 1, records, attempts: 1, calls: 3, details: '', durationMs: 1, request: {} as never };
        });
      },
    };
    const pool = new RolloutPool({ runner, concurrency: 2, jobsOf: jobsOf(2), done: new Set(), maxOutstanding: 3 });
    pool.start();
    const trained: number[] = [];
    let spanDropped = 0;
    while (trained.length < 4) {
      const batch = (await pool.take(1, 2, 2, 1))!; // trainer at version 2: nothing is too stale
      for (const u of batch.units) { trained.push(u.index); for (const r of u.reports) expect(rolloutSpan(r)).toBeLessThanOrEqual(1); }
      for (const r of batch.dropped) expect(rolloutSpan(r)).toBe(2);
      expect(batch.dropped).toHaveLength(batch.spanDropped);
      spanDropped += batch.spanDropped;
    }
    await pool.stop();
    expect(trained.every((u) => u % 3 !== 2)).toBe(true);
    expect(spanDropped).toBeGreaterThanOrEqual(2); // unit 2's two rollouts at least
  });

  it('never starts a unit an earlier life of the run already consumed', async () => {
    const runner = fakeRunner(() => 0);
    const pool = new RolloutPool({ runner, concurrency: 2, jobsOf: jobsOf(1), done: new Set([0, 1, 3]), maxOutstanding: 2 });
    pool.start();
    const a = (await pool.take(2, 0, 0))!;
    expect(a.units.map((u) => u.index).sort()).toEqual([2, 4]);
    await pool.stop();
    expect(runner.started.map((s) => s.id).filter((id) => /^u[013]-/.test(id))).toEqual([]);
  });

  it('fair: trains the groups that started first, drops none however stale, and holds new groups back while the oldest running one lags', async () => {
    for (const policy of ['fair', 'freshest'] as const) {
      let version = 0;
      let release!: () => void;
      const long = new Promise<void>((ok) => { release = ok; });
      const starts: { unit: number; version: number }[] = [];
      // Unit 0 is a long rollout: it runs until released; every other unit finishes at once.
      const runner = {
        async run(jobs: readonly RolloutJob[]): Promise<RolloutReport[]> {
          const job = jobs[0]!;
          const unit = Number(/^u(\d+)-/.exec(job.rolloutId)![1]);
          starts.push({ unit, version });
          const served = version;
          await (unit === 0 ? long : new Promise((ok) => setTimeout(ok, 1)));
          const records = [{ rolloutId: job.rolloutId, callIndex: 0, policyVersion: served } as ModelCallRecord];
          return [{ rolloutId: job.rolloutId, sessionId: job.rolloutId, outcome: 'ok', reward: 1, records, attempts: 1, calls: 1, details: '', durationMs: unit === 0 ? 9000 : 10, request: {} as never }];
        },
      };
      const pool = new RolloutPool({ runner, concurrency: 2, jobsOf: jobsOf(1), done: new Set(), maxOutstanding: 4, policy, maxStaleness: 1, version: () => version });
      pool.start();
      const taken: number[] = [];
      const dropped: number[] = [];
      for (let step = 0; step < 3; step++) {
        const batch = (await pool.take(1, version, 1))!;
        taken.push(...batch.units.map((u) => u.index));
        dropped.push(...batch.dropped.map((r) => Number(/^u(\d+)-/.exec(r.rolloutId)![1])));
        version++;
      }
      // Version 3: the long group started at 0. Fair starts nothing once the lag passed 1 (a group
      // admitted at version 1 may reach the runner as the trainer publishes 2).
      await new Promise((ok) => setTimeout(ok, 50));
      if (policy === 'fair') expect(starts.filter((s) => s.version >= 3)).toEqual([]);
      else expect(starts.filter((s) => s.version >= 3).length).toBeGreaterThan(0);
      release();
      await new Promise((ok) => setTimeout(ok, 20)); // the long group is ready
      for (let step = 3; step < 5; step++) {
        const batch = (await pool.take(1, version, 1))!;
        taken.push(...batch.units.map((u) => u.index));
        dropped.push(...batch.dropped.map((r) => Number(/^u(\d+)-/.exec(r.rolloutId)![1])));
        version++;
      }
      await pool.stop();
      if (policy === 'fair') {
        // The long group is trained at the first step after it finished, three versions late, and nothing is dropped.
        expect(taken.indexOf(0)).toBe(3);
        expect(new Set(taken).size).toBe(5);
        expect(dropped).toEqual([]);
      } else {
        // `freshest` passes it over and drops it: what makes training lean to short tasks.
        expect(taken).not.toContain(0);
        expect(dropped).toContain(0);
      }
    }
  });

  it('fair: an engine that never loads the trainer\'s weights stops the run, as freshest\'s drops do', async () => {
    // Every call is served by version 0 whatever the trainer publishes. Fair drops nothing, so it
    // must notice another way: no rollout lags more than 2K + 2 versions with an engine in step.
    let version = 0;
    const pool = new RolloutPool({ runner: fakeRunner(() => 0), concurrency: 2, jobsOf: jobsOf(2), done: new Set(), maxOutstanding: 4, policy: 'fair', maxStaleness: 1, version: () => version });
    pool.start();
    let error: unknown;
    let steps = 0;
    try {
      for (; steps < 40; steps++) { await pool.take(2, version, 1); version++; }
    } catch (err) {
      error = err;
    } finally {
      await pool.stop();
    }
    expect(error).toMatchObject({ code: 'CLAWGYM_ENGINE_SYNC_FAILED', message: expect.stringMatching(/rollout groups in a row were served more than 4 versions behind the trainer/) });
    // Versions 0–4 are within the bound; then one more than maxOutstanding units (two a step) in a row.
    expect(steps).toBeLessThan(10);
    // The same pool with the engine in step trains on: the check does not fire on a working engine.
    version = 0;
    const ok = new RolloutPool({ runner: fakeRunner(() => version), concurrency: 2, jobsOf: jobsOf(2), done: new Set(), maxOutstanding: 4, policy: 'fair', maxStaleness: 1, version: () => version });
    ok.start();
    try {
      for (let s = 0; s < 20; s++) { expect(await ok.take(2, version, 1)).toBeDefined(); version++; }
    } finally {
      await ok.stop();
    }
  });
});
