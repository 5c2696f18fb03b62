import type { RolloutJob, RolloutReport } from '../../6-rollout/runner';
import { Rng } from '../../util/rng';
import type { RunStateFile } from '../state';
import { trainOn, type StepOutcome, type StepServices } from '../step';
import { RolloutPool, rolloutSpan, rolloutVersion, type TakePolicy } from './rollout-pool';
import { lengthValues } from './lengths';

/** Staleness buckets reported per step: 0, 1, …, up to this, and one for more. */
const HISTOGRAM_TOP = 8;

/**
 * The asynchronous loop's rollouts and steps (`run.async`): a {@link RolloutPool} keeps the
 * rollout workers busy while the trainer steps; each step takes `tasksPerStep` finished groups
 * by the run's policy (`fair`: those that started first, none dropped; `freshest`: the freshest,
 * after dropping every rollout more than `maxStaleness` versions behind) and trains on them. At most `(1 + maxStaleness) × tasksPerStep` groups are started and not yet
 * trained, so rollouts never run further ahead than the bound lets them be trained.
 *
 * Resume keeps the synchronous loop's guarantees: the groups each finished step consumed are
 * in `state.json` with the step (written after its checkpoint), so none is trained twice; a
 * group in flight or finished but untrained at a kill starts again under fresh rollout ids, so
 * none is lost. Its records from the killed attempt stay on disk.
 */
export class AsyncLoop {
  private readonly pool: RolloutPool;
  private finishedAtLastStep = 0;

  /** `maxVersionSpan`: how many versions one rollout's calls may span (default `maxStaleness`). */
  constructor(private readonly s: StepServices, private readonly state: RunStateFile, private readonly maxStaleness: number, onRollout?: (r: RolloutReport) => void, private readonly maxVersionSpan = maxStaleness, policy: TakePolicy = 'fair') {
    const { run } = s.kernel.config;
    this.pool = new RolloutPool({
      runner: s.runner, concurrency: run.concurrency, done: new Set(state.state.unitsDone ?? []),
      maxOutstanding: (1 + maxStaleness) * run.tasksPerStep, jobsOf: (u) => this.jobsOf(u), onRollout,
      policy, maxStaleness, version: () => s.trainer.policyVersion(),
    });
  }

  /** The rollouts of group `unit`: one task (drawn from the unit's seed) through every harness, `groupSize` times. */
  private async jobsOf(unit: number): Promise<RolloutJob[]> {
    const { run } = this.s.kernel.config;
    const attempt = await this.state.startUnit(unit);
    const task = this.s.tasks[new Rng(run.seed * 1_000_003 + 7_919 * unit + 1).int(0, this.s.tasks.length - 1)]!;
    const jobs: RolloutJob[] = [];
    for (const { harness, options } of this.s.harnesses) {
      for (let g = 0; g < run.groupSize; g++) jobs.push({ rolloutId: `u${unit}a${attempt}-${harness.name}-${g}`, step: this.state.state.step + 1, task, harness, harnessOptions: options });
    }
    return jobs;
  }

  async start(signal?: AbortSignal): Promise<void> {
    // The runner sweeps the run's leftovers before its first rollout: let it finish before any starts.
    await this.s.runner.run([], signal);
    this.pool.start(signal);
  }

  /** One step: wait for the groups the policy takes, train on them. Undefined when stopped first. */
  async step(): Promise<StepOutcome | undefined> {
    const { run } = this.s.kernel.config;
    const started = Date.now();
    const version = this.s.trainer.policyVersion();
    const batch = await this.pool.take(run.tasksPerStep, version, this.maxStaleness, this.maxVersionSpan);
    if (!batch) return undefined;
    const waited = (Date.now() - started) / 1000;
    const reports = batch.units.flatMap((u) => u.reports);
    const { trees, train, advantages, trainSeconds } = await trainOn(this.s, reports);
    const seconds = (Date.now() - started) / 1000;
    const values: Record<string, number> = {
      'async/stale_dropped': batch.dropped.length,
      'async/rollouts_finished': this.pool.finished - this.finishedAtLastStep,
      'async/max_staleness_trained': 0,
      'async/span_dropped': batch.spanDropped,
      // Partial rollouts: the most policy versions one trained rollout's calls spanned.
      'async/max_version_span_trained': 0,
    };
    for (let k = 0; k <= HISTOGRAM_TOP; k++) values[`async/staleness/${k === HISTOGRAM_TOP ? `${k}+` : k}`] = 0;
    for (const r of reports) {
      const v = rolloutVersion(r);
      if (v === undefined || r.outcome === 'infra-error') continue;
      const lag = version - v;
      values[`async/staleness/${lag >= HISTOGRAM_TOP ? `${HISTOGRAM_TOP}+` : lag}`]! += 1;
      values['async/max_staleness_trained'] = Math.max(values['async/max_staleness_trained']!, lag);
      values['async/max_version_span_trained'] = Math.max(values['async/max_version_span_trained']!, rolloutSpan(r));
    }
    values['async/rollouts_per_min'] = values['async/rollouts_finished']! / Math.max(1e-6, seconds / 60);
    // Whether the policy favours short rollouts: lengths of what finished (trained or dropped) and of what is trained.
    Object.assign(values, lengthValues([...reports, ...batch.dropped], reports));
    this.finishedAtLastStep = this.pool.finished;
    return {
      reports, trees, ...(train ? { train, advantages, trainSeconds } : {}), rolloutSeconds: waited, dropped: batch.dropped,
      async: { values, units: [...batch.units.map((u) => u.index), ...batch.droppedUnits] },
    };
  }

  stop(): Promise<void> {
    return this.pool.stop();
  }
}
