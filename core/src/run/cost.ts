import type { MetricsEvent } from '../contracts/reporter';
import { moneyOf, rolloutCostValues, type Prices } from '../6-rollout/cost';
import type { RolloutReport } from '../6-rollout/runner';
import type { StepOutcome } from './step';

const RUN = 'cost/run/';

/**
 * The run's cost accounting: each step's figures (its rollouts, trained or dropped; the trainer's
 * time and tokens; money under the config's prices) and the run's totals so far under
 * `cost/run/` (held-out evaluations included), carried over a resume from the last event that had
 * them. `cost/run/reward` sums the reward of the trained steps' scored rollouts: the run's reward
 * points, which cost per reward point divides by.
 */
export class RunCost {
  private readonly totals: Record<string, number> = {};

  constructor(private readonly prices: Prices | undefined, previous: readonly MetricsEvent[] = []) {
    const last = [...previous].reverse().find((e) => Object.keys(e.values).some((k) => k.startsWith(RUN)));
    for (const [k, v] of Object.entries(last?.values ?? {})) if (k.startsWith(RUN) && typeof v === 'number') this.totals[k.slice(RUN.length)] = v;
  }

  /** A step's cost figures and the run's totals after it. */
  step(o: StepOutcome, seconds: number): Record<string, number> {
    const trainSeconds = o.trainSeconds ?? 0;
    const figures: Record<string, number> = {
      ...rolloutCostValues([...o.reports, ...o.dropped ?? []]),
      'cost/trainer_seconds': trainSeconds, 'cost/trainer_tokens': o.train?.tokens ?? 0, 'cost/seconds': seconds,
    };
    const values = { ...figures, ...(this.prices ? moneyOf(figures, this.prices, { seconds, trainer: true }) : {}) };
    const reward = o.reports.filter((r) => r.outcome !== 'infra-error').reduce((n, r) => n + (Number.isNaN(r.reward) ? 0 : r.reward), 0);
    return { ...values, ...this.add(values, reward) };
  }

  /** A held-out evaluation's cost figures (its rollouts; the engine and trainer held through it) and the run's totals after it. */
  evaluation(reports: readonly RolloutReport[], seconds: number): Record<string, number> {
    const rollouts = rolloutCostValues(reports);
    const values = { ...rollouts, 'cost/seconds': seconds, ...(this.prices ? moneyOf(rollouts, this.prices, { seconds, trainer: true }) : {}) };
    return { ...values, ...this.add(values, 0) };
  }

  private add(values: Record<string, number>, reward: number): Record<string, number> {
    for (const [k, v] of Object.entries({ ...values, 'cost/reward': reward })) {
      const key = k.slice('cost/'.length);
      this.totals[key] = (this.totals[key] ?? 0) + v;
    }
    // Every total so far, also those this event had nothing of (an evaluation's trainer tokens).
    return Object.fromEntries(Object.entries(this.totals).map(([k, v]) => [`${RUN}${k}`, v]));
  }
}
