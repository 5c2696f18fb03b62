import type { RolloutEntry } from './rollout-log';

type Sums = Map<number, Map<string, { sum: number; n: number }>>;

function add(m: Sums, step: number, key: string, value: number, n = 1): void {
  let s = m.get(step);
  if (!s) m.set(step, (s = new Map()));
  const cur = s.get(key) ?? { sum: 0, n: 0 };
  cur.sum += value;
  cur.n += n;
  s.set(key, cur);
}

/** Series of [step, value] per key, from per-step sums: the mean (or the sum) per step. */
function seriesOf(m: Sums, value: (c: { sum: number; n: number }) => number): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  for (const step of [...m.keys()].sort((a, b) => a - b)) {
    for (const [key, c] of m.get(step)!) {
      if (!out.has(key)) out.set(key, []);
      out.get(key)!.push([step, value(c)]);
    }
  }
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Per-step figures that only the rollout log holds, gathered as it streams past: reward per
 * category, infrastructure failures by class, TITO reuse and drift per harness, staleness.
 */
export class StepAggregates {
  private readonly reward: Sums = new Map();
  private readonly infra: Sums = new Map();
  private readonly reuse: Sums = new Map();
  private readonly drift: Sums = new Map();
  private readonly stale: Sums = new Map();
  private readonly steps = new Set<number>();

  add(e: RolloutEntry): void {
    this.steps.add(e.step);
    if (e.reward !== null) add(this.reward, e.step, e.category, e.reward);
    if (e.infraClass) add(this.infra, e.step, e.infraClass, 1, 0);
    const later = e.tito.reuse + e.tito.forks;
    if (later) add(this.reuse, e.step, e.harness, e.tito.reuse, later);
    const calls = e.drift.clean + e.drift.realigned + e.drift.fork;
    if (calls) add(this.drift, e.step, e.harness, e.drift.realigned + e.drift.fork, calls);
    if (e.trainedAt !== undefined && e.policy && e.outcome !== 'infra-error') {
      add(this.stale, e.step, 'mean', e.trainedAt - e.policy[0]);
      add(this.stale, e.step, 'max', 0, 0);
      const s = this.stale.get(e.step)!.get('max')!;
      s.sum = Math.max(s.sum, e.trainedAt - e.policy[0]);
    }
  }

  /** Mean reward per category per step. */
  rewardByCategory() { return seriesOf(this.reward, (c) => c.sum / c.n); }

  /** Failures per class per step, zero at steps with rollouts but none of that class. */
  infraByClass() {
    const classes = new Set([...this.infra.values()].flatMap((m) => [...m.keys()]));
    for (const step of this.steps) for (const k of classes) add(this.infra, step, k, 0, 0);
    return seriesOf(this.infra, (c) => c.sum);
  }

  /** Share of later main calls that reused their parent's ids, per harness per step. */
  reuseByHarness() { return seriesOf(this.reuse, (c) => c.sum / c.n); }

  /** Share of calls that drifted (realigned or forked), per harness per step. */
  driftByHarness() { return seriesOf(this.drift, (c) => c.sum / c.n); }

  staleness() { return seriesOf(this.stale, (c) => (c.n ? c.sum / c.n : c.sum)); }
}
