import type { MetricsEvent } from '../contracts/reporter';
import type { StepAggregates } from './step-aggregates';
import { pass1ByCost } from './cost-summary';
import { lengthSeries } from './lengths';

/** One series of a chart: [step, value] points; `err` a ± band per point; `raw` drawn faint, behind its smoothed line. */
export interface Series { name: string; points: [number, number][]; err?: number[]; raw?: boolean }

/** One chart: named series of [step, value] points. */
export interface Chart {
  id: string;
  title: string;
  yLabel: string;
  /** What the x axis counts (default: step). */
  xLabel?: string;
  series: Series[];
}

/** The figures of one run the charts are drawn from. */
export interface RunFigures { name: string; events: readonly MetricsEvent[]; steps: StepAggregates; currency?: string }

const keysLike = (events: readonly MetricsEvent[], prefix: string) =>
  [...new Set(events.flatMap((e) => Object.keys(e.values)).filter((k) => k.startsWith(prefix)))].sort();

function series(events: readonly MetricsEvent[], key: string, name = key): Series {
  return { name, points: events.filter((e) => typeof e.values[key] === 'number').map((e): [number, number] => [e.step, e.values[key] as number]) };
}

/**
 * An exponential moving average with TensorBoard's debiasing (weight 0.8 by default): per-step
 * reward over a few dozen rollouts is noise around the trend the user is after.
 */
export function smooth(points: readonly [number, number][], weight = 0.8): [number, number][] {
  let last = 0;
  return points.map(([x, y], i) => {
    last = last * weight + (1 - weight) * y;
    return [x, last / (1 - weight ** (i + 1))];
  });
}

const fromMap = (m: Map<string, [number, number][]>, prefix = ''): Series[] => [...m].map(([k, points]) => ({ name: `${prefix}${k}`, points }));

const ratio = (steps: readonly MetricsEvent[], num: (v: MetricsEvent['values']) => unknown, den: string): [number, number][] =>
  steps.filter((e) => typeof e.values[den] === 'number' && (e.values[den] as number) > 0 && typeof num(e.values) === 'number')
    .map((e) => [e.step, (num(e.values) as number) / (e.values[den] as number)]);

/** Mean and max staleness per step, from the asynchronous loop's histogram (`async/staleness/k`). */
function stalenessFromMetrics(steps: readonly MetricsEvent[]): Series[] {
  const mean: [number, number][] = [];
  for (const e of steps) {
    let n = 0; let sum = 0;
    for (const [k, v] of Object.entries(e.values)) {
      const m = /^async\/staleness\/(\d+)\+?$/.exec(k);
      if (m && typeof v === 'number') { n += v; sum += v * Number(m[1]); }
    }
    if (n) mean.push([e.step, sum / n]);
  }
  return [{ name: 'mean', points: mean }, series(steps, 'async/max_staleness_trained', 'max')];
}

/** The charts of one run (prefix '') or of one of several overlaid (prefix 'name: '). */
function runCharts(f: RunFigures, prefix: string): Chart[] {
  const steps = f.events.filter((e) => e.kind === 'step');
  const evals = f.events.filter((e) => e.kind === 'eval');
  const p = (s: Series): Series => ({ ...s, name: `${prefix}${s.name}` });
  const reward = series(steps, 'reward', 'all');
  const pass1 = series(evals, 'pass1', 'all');
  const se = evals.filter((e) => typeof e.values.pass1 === 'number').map((e) => (typeof e.values['pass1/se'] === 'number' ? e.values['pass1/se'] as number : 0));
  const harnesses = keysLike(steps, 'reward/').filter((k) => k.split('/').length === 2);
  const staleness = f.steps.staleness();
  return [
    { id: 'reward', title: 'Reward per step (faint: raw; line: smoothed)', yLabel: 'mean reward', series: [{ ...p(reward), name: `${prefix}raw`, raw: true }, p({ name: 'smoothed', points: smooth(reward.points) })] },
    { id: 'pass1', title: 'Held-out Pass@1 at each evaluation (± standard error)', yLabel: 'Pass@1', series: [p({ ...pass1, err: se }), ...keysLike(evals, 'pass1/').filter((k) => k.split('/').length === 3).map((k) => p(series(evals, k, k.slice(6))))] },
    { id: 'reward-harness', title: 'Reward per harness (smoothed)', yLabel: 'mean reward', series: harnesses.map((k) => p({ name: k.slice(7), points: smooth(series(steps, k).points) })) },
    { id: 'reward-category', title: 'Reward per category (smoothed)', yLabel: 'mean reward', series: fromMap(f.steps.rewardByCategory(), prefix).map((s) => ({ ...s, points: smooth(s.points) })) },
    { id: 'infra', title: 'Infrastructure failures by class', yLabel: 'rollouts', series: [p(series(steps, 'infra', 'all')), ...fromMap(f.steps.infraByClass(), prefix)] },
    { id: 'tito', title: 'TITO reuse per harness (share of later calls)', yLabel: 'share', series: fromMap(f.steps.reuseByHarness(), prefix) },
    { id: 'drift', title: 'Template drift per harness (share of calls realigned or forked)', yLabel: 'share', series: fromMap(f.steps.driftByHarness(), prefix) },
    { id: 'throughput', title: 'Tokens per second', yLabel: 'tokens/s', series: [
      p({ name: 'generated (rollout phase)', points: ratio(steps, (v) => v['tokens/generated'], 'seconds/rollouts') }),
      p({ name: 'trained (whole step)', points: ratio(steps, (v) => v['train/tokens'] ?? 0, 'seconds') }),
    ] },
    { id: 'staleness', title: 'Staleness of trained rollouts (policy versions behind)', yLabel: 'versions', series: (staleness.size ? fromMap(staleness) : stalenessFromMetrics(steps)).map(p) },
    { id: 'lengths', title: 'Rollout lengths: finished vs trained (asynchronous runs; share per bucket)', yLabel: 'share', xLabel: 'seconds <', series: lengthSeries(f.events).map(p) },
    { id: 'trees', title: 'Trees: calls, trained rollouts, what the filters removed', yLabel: 'count', series: ['calls', 'trained', 'infra', ...keysLike(steps, 'filter/')].map((k) => p(series(steps, k))) },
    { id: 'pass1-cost', title: `Held-out Pass@1 against cumulative cost (${f.currency ?? 'sandbox-hours; no prices in the config'})`, yLabel: 'Pass@1', xLabel: pass1ByCost(f.events, Boolean(f.currency)).xLabel, series: [p({ name: 'all', points: pass1ByCost(f.events, Boolean(f.currency)).points })] },
    { id: 'cost', title: 'Cost per step: seconds of sandboxes, harnesses, engine calls and the trainer', yLabel: 'seconds', series: ['sandbox_seconds', 'sandbox_cpu_seconds', 'harness_seconds', 'engine_seconds', 'trainer_seconds'].map((k) => p(series(steps, `cost/${k}`, k.replace('_seconds', '')))) },
    { id: 'mismatch', title: 'Engine/trainer mismatch and clipping', yLabel: 'value', series: ['train/mismatchAbsLogp', 'train/mismatchKl', 'train/clipFraction'].map((k) => p(series(steps, k, k.slice(6)))) },
  ];
}

/** The charts of a run, or of several overlaid (each series named after its run). */
export function chartsOf(runs: readonly RunFigures[]): Chart[] {
  const per = runs.map((r) => runCharts(r, runs.length > 1 ? `${r.name}: ` : ''));
  return per[0]!.map((c, i) => ({ ...c, series: per.flatMap((cs) => cs[i]!.series).filter((s) => s.points.length > 0) }));
}
