import { setMaxListeners } from 'node:events';
import { ClawGymError, ErrorCodes } from '../../errors';
import type { RolloutJob, RolloutReport, RolloutRunner } from '../../6-rollout/runner';

/** A group of rollouts that trains together: one task through every harness, `groupSize` times. */
export interface Unit {
  index: number;
  reports: RolloutReport[];
  /** When its last rollout finished (ms since the epoch). */
  finishedAt: number;
  /** The trainer's policy version when its first rollout started. */
  startVersion?: number;
}

/**
 * Which finished groups a step trains. `freshest`: the freshest ready groups, after dropping every
 * rollout more than `maxStaleness` versions behind (a long rollout, which started under older
 * weights, is passed over and then dropped more often than a short one: training leans to short
 * tasks). `fair`: the groups that started first, whatever their length; a stale rollout is
 * withheld until it is taken, never dropped, and staleness is bounded at the other end — no new
 * group starts while the oldest one still running started more than `maxStaleness` versions ago.
 */
export type TakePolicy = 'freshest' | 'fair';

/** What a step takes from the pool. */
export interface Batch {
  units: Unit[];
  /** Rollouts dropped because they lagged more than `maxStaleness` versions (never trained). */
  dropped: RolloutReport[];
  /** Units given up whole because all their rollouts were dropped. */
  droppedUnits: number[];
  /** Of `dropped`, those whose calls spanned more than `maxVersionSpan` versions. */
  spanDropped: number;
}

export interface PoolOptions {
  runner: Pick<RolloutRunner, 'run'>;
  /** Rollouts at once. */
  concurrency: number;
  /** The rollouts of unit `index` (fresh ids per attempt: a resumed run starts it again). */
  jobsOf(index: number): Promise<RolloutJob[]>;
  /** Units already trained or dropped in an earlier life of the run: never started again. */
  done: ReadonlySet<number>;
  /** Units started and not yet taken, at most: how far rollouts may run ahead of the trainer. */
  maxOutstanding: number;
  /** Called with every rollout as it finishes (live progress). */
  onRollout?: (report: RolloutReport) => void;
  /** Which groups a step takes (unset: `freshest`; the run loop passes the config's, whose default is `fair`). */
  policy?: TakePolicy;
  /** The trainer's policy version now (`fair`: a group's start version, and when to hold new groups back). */
  version?: () => number;
  /** `fair`: how many versions the oldest running group may lag before no new group starts. */
  maxStaleness?: number;
}

/**
 * The oldest policy version any of a rollout's calls were served by: how stale it is. A rollout
 * with no call has no version (it is an infrastructure failure, never trained anyway).
 */
export function rolloutVersion(r: RolloutReport): number | undefined {
  return r.records.length ? Math.min(...r.records.map((c) => c.policyVersion)) : undefined;
}

/**
 * How many policy versions a rollout's calls span (newest − oldest): a weight update landed
 * between its calls that many times. 0 without calls.
 */
export function rolloutSpan(r: RolloutReport): number {
  if (!r.records.length) return 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of r.records) { lo = Math.min(lo, c.policyVersion); hi = Math.max(hi, c.policyVersion); }
  return hi - lo;
}

/**
 * Rollouts that keep running while the trainer steps (asynchronous RL): workers take the jobs of
 * unit after unit, `concurrency` at a time, as long as fewer than `maxOutstanding` units are
 * started and not taken; a unit is ready when all its rollouts finished. A step {@link take}s
 * the freshest ready units, after dropping every rollout more than `maxStaleness` versions
 * behind the trainer. Jobs in flight are cancelled by {@link stop}.
 */
export class RolloutPool {
  private readonly abort = new AbortController();
  private readonly ready: Unit[] = [];
  private readonly outstanding = new Set<number>();
  private readonly queue: { unit: number; job: RolloutJob }[] = [];
  private readonly pending = new Map<number, { left: number; reports: RolloutReport[]; startVersion: number }>();
  private nextUnit = 0;
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private workers: Promise<void>[] = [];
  private failure?: unknown;
  /** `fair`: trained units in a row served far behind the trainer ({@link checkServed}). */
  private lagging = 0;
  /** Rollouts finished so far. */
  finished = 0;

  constructor(private readonly o: PoolOptions) {}

  start(signal?: AbortSignal): void {
    setMaxListeners(0, this.abort.signal); // every rollout in flight listens to it
    signal?.addEventListener('abort', () => { this.abort.abort(); this.notify(); }, { once: true });
    this.workers = Array.from({ length: this.o.concurrency }, () => this.worker());
  }

  /** Cancel what is running and wait for it to be torn down. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.notify();
    await Promise.all(this.workers);
  }

  /**
   * The freshest `count` ready units for a step at trainer version `version`, waiting until that
   * many are ready; stale rollouts (older than `version − maxStaleness`) and rollouts whose
   * calls span more than `maxVersionSpan` versions are dropped first. Undefined when the pool
   * was stopped first.
   */
  async take(count: number, version: number, maxStaleness: number, maxVersionSpan = maxStaleness): Promise<Batch | undefined> {
    const dropped: RolloutReport[] = [];
    const droppedUnits: number[] = [];
    let spanDropped = 0;
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.abort.signal.aborted) return undefined;
      // `fair` withholds a stale group rather than dropping it (its staleness is bounded where groups start).
      for (let i = this.ready.length - 1; i >= 0 && this.o.policy !== 'fair'; i--) {
        const u = this.ready[i]!;
        const keep = u.reports.filter((r) => { const v = rolloutVersion(r); return v === undefined || version - v <= maxStaleness; });
        const spanned = keep.filter((r) => rolloutSpan(r) > maxVersionSpan);
        spanDropped += spanned.length;
        for (const r of spanned) keep.splice(keep.indexOf(r), 1);
        dropped.push(...u.reports.filter((r) => !keep.includes(r)));
        u.reports = keep;
        if (keep.length === 0) { this.ready.splice(i, 1); this.outstanding.delete(u.index); droppedUnits.push(u.index); this.notify(); }
      }
      if (this.ready.length >= count) break;
      if (droppedUnits.length > 4 * this.o.maxOutstanding) {
        // Every group comes back stale: the engine is not serving the trainer's weights. Stop,
        // rather than roll out forever.
        const served = Math.max(...dropped.map((r) => rolloutVersion(r) ?? -1));
        throw new ClawGymError(ErrorCodes.ENGINE_SYNC_FAILED, `${droppedUnits.length} rollout groups in a row were more than ${maxStaleness} versions behind the trainer (version ${version}); the newest served version was ${served}`, {
          hint: 'The engine is not loading the weights the trainer publishes: check its weight sync (docs/scale.md), or raise run.async.maxStaleness.',
        });
      }
      await this.wait();
    }
    // Freshest first: the newest weights that served a unit, then the latest to finish. Fair:
    // the first started, so a long group is trained at the first step after it finished.
    const fresh = (u: Unit) => Math.min(...u.reports.map((r) => rolloutVersion(r) ?? -1));
    if (this.o.policy === 'fair') this.ready.sort((a, b) => a.index - b.index);
    else this.ready.sort((a, b) => fresh(b) - fresh(a) || b.finishedAt - a.finishedAt);
    const units = this.ready.splice(0, count);
    for (const u of units) this.outstanding.delete(u.index);
    this.notify();
    if (this.o.policy === 'fair') this.checkServed(units, version, maxStaleness);
    return { units, dropped, droppedUnits, spanDropped };
  }

  /**
   * `fair` drops nothing, so an engine that never loads the trainer's weights would otherwise go
   * unnoticed (`freshest` notices: every group comes back stale). With the engine in step, no
   * trained rollout lags more than `2 × maxStaleness + 2` versions: `maxStaleness + 1` before new
   * groups are held back, at most `maxStaleness` steps more on the groups already started, one
   * for a weight sync in flight. A run of more units than may be outstanding, each of whose
   * rollouts lags more than that, stops the run.
   */
  private checkServed(units: readonly Unit[], version: number, maxStaleness: number): void {
    const bound = 2 * maxStaleness + 2;
    for (const u of units) {
      const served = u.reports.map(rolloutVersion).filter((v): v is number => v !== undefined);
      if (!served.length) continue; // infrastructure failures: no call, no version
      this.lagging = served.every((v) => version - v > bound) ? this.lagging + 1 : 0;
    }
    if (this.lagging > this.o.maxOutstanding) {
      const newest = Math.max(...units.flatMap((u) => u.reports.map((r) => rolloutVersion(r) ?? -1)));
      throw new ClawGymError(ErrorCodes.ENGINE_SYNC_FAILED, `${this.lagging} rollout groups in a row were served more than ${bound} versions behind the trainer (version ${version}; the newest version that served one was ${newest}), more than the fair policy lets a rollout lag with an engine that loads each version`, {
        hint: 'The engine is not loading the weights the trainer publishes: check its weight sync (docs/scale.md).',
      });
    }
  }

  /**
   * `fair`: hold new groups back while the oldest group still running started more than
   * `maxStaleness` versions ago, so waiting for a long group bounds its staleness instead of
   * dropping it. (The trainer takes what is ready meanwhile; a step's end wakes the workers.)
   */
  private holdsBack(): boolean {
    if (this.o.policy !== 'fair' || !this.o.version) return false;
    let oldest = Infinity;
    for (const p of this.pending.values()) if (p.left > 0) oldest = Math.min(oldest, p.startVersion);
    return oldest !== Infinity && this.o.version() - oldest > (this.o.maxStaleness ?? 0);
  }

  private wait(): Promise<void> {
    return new Promise<void>((ok) => this.waiters.push(ok));
  }

  /** Wake everyone waiting: a unit became ready, a slot freed, or the pool stopped. */
  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The next job to run, starting the next unit when the bound allows; undefined: wait. */
  private async nextJob(): Promise<{ unit: number; job: RolloutJob } | undefined> {
    if (this.queue.length) return this.queue.shift();
    if (this.outstanding.size >= this.o.maxOutstanding) return undefined;
    if (this.holdsBack()) return undefined;
    while (this.o.done.has(this.nextUnit)) this.nextUnit++;
    const unit = this.nextUnit++;
    this.outstanding.add(unit);
    const jobs = await this.o.jobsOf(unit);
    this.pending.set(unit, { left: jobs.length, reports: [], startVersion: this.o.version?.() ?? 0 });
    this.queue.push(...jobs.map((job) => ({ unit, job })));
    return this.queue.shift();
  }

  private async worker(): Promise<void> {
    while (!this.abort.signal.aborted) {
      let next: { unit: number; job: RolloutJob } | undefined;
      try {
        next = await this.nextJob();
      } catch (err) {
        this.failure = err;
        this.abort.abort();
        this.notify();
        return;
      }
      if (!next) {
        await this.wait();
        continue;
      }
      this.inFlight++;
      const [report] = await this.o.runner.run([next.job], this.abort.signal);
      this.inFlight--;
      if (this.abort.signal.aborted || !report) break;
      this.finished++;
      this.o.onRollout?.(report);
      const p = this.pending.get(next.unit)!;
      p.reports.push(report);
      if (--p.left === 0) {
        this.pending.delete(next.unit);
        this.ready.push({ index: next.unit, reports: p.reports, finishedAt: Date.now(), startVersion: p.startVersion });
        this.notify();
      }
    }
  }
}
