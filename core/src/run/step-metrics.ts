import type { HarnessSlot } from '../6-rollout/tokens';
import { isTrainable } from '../7-tree/trainable';
import type { StepOutcome } from './step';
import { rolloutEntryOf, type RolloutEntry } from '../report/rollout-log';

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * The numbers of a step's metrics event: reward and pass over scored rollouts (infrastructure
 * failures apart), per harness and, with more than one category, per harness × category (where
 * the reward moves); filter counts; the advantage step's metrics under `adv/` and the
 * trainer's under `train/`; timings and tokens.
 */
export function stepMetrics(o: StepOutcome, harnesses: readonly HarnessSlot[], timing: { seconds: number; tokens: number }): Record<string, number> {
  const { reports, trees } = o;
  const scored = reports.filter((r) => r.outcome !== 'infra-error');
  const filters: Record<string, number> = {};
  for (const t of trees) for (const [k, v] of Object.entries(t.filterCounts)) filters[`filter/${k}`] = (filters[`filter/${k}`] ?? 0) + v;
  const values: Record<string, number> = {
    reward: mean(scored.map((r) => r.reward)), pass: mean(scored.map((r) => (r.verdict?.pass ? 1 : 0))),
    rollouts: reports.length, infra: reports.length - scored.length, calls: reports.reduce((n, r) => n + r.calls, 0),
    trained: trees.filter(isTrainable).length,
    seconds: timing.seconds, 'seconds/rollouts': o.rolloutSeconds,
    // The share of the step the trainer waited for rollouts, and finished rollouts per minute.
    'trainer/idle': o.rolloutSeconds / Math.max(1e-6, timing.seconds),
    'rollouts/per_min': (o.async?.values['async/rollouts_finished'] ?? reports.length) / Math.max(1e-6, timing.seconds / 60),
    'tokens/generated': timing.tokens, ...filters,
    ...Object.fromEntries(Object.entries(o.advantages?.metrics ?? {}).map(([k, v]) => [`adv/${k}`, v])),
    ...Object.fromEntries(Object.entries(o.train ?? {}).map(([k, v]) => [`train/${k}`, v])),
  };
  // The fault accounting: infrastructure failures by class (`infra/harness-start`, `infra/engine`, …).
  for (const r of reports) if (r.outcome === 'infra-error') { const k = `infra/${r.infraClass ?? 'runner'}`; values[k] = (values[k] ?? 0) + 1; }
  for (const { harness } of harnesses) values[`reward/${harness.name}`] = mean(scored.filter((r) => r.request.harness === harness.name).map((r) => r.reward));
  const categories = [...new Set(scored.map((r) => r.request.category))].sort();
  if (categories.length > 1) {
    for (const { harness } of harnesses) for (const c of categories) {
      const rs = scored.filter((r) => r.request.harness === harness.name && r.request.category === c);
      if (rs.length) values[`reward/${harness.name}/${c}`] = mean(rs.map((r) => r.reward));
    }
  }
  return values;
}

/** The step's log line. */
export function stepLine(step: number, steps: number, values: Record<string, number>, o: StepOutcome): string {
  const train = o.train
    ? `loss ${o.train.loss.toFixed(4)}, |Δlogp| ${o.train.mismatchAbsLogp.toFixed(5)}`
    : 'no trainable rollout: trainer step skipped';
  return `step ${step}/${steps}: reward ${values.reward!.toFixed(3)}, pass ${(100 * values.pass!).toFixed(1)}%, ${o.reports.length} rollouts (${values.infra} infra), ${train}, ${values.seconds!.toFixed(1)} s`;
}

/** The step's rollouts as the report's rollout log has them: each with its tree and advantages. */
export function stepRollouts(step: number, o: StepOutcome, trainedAt: number): RolloutEntry[] {
  const trees = new Map(o.trees.map((t) => [t.rolloutId, t]));
  return o.reports.map((r) => rolloutEntryOf(step, r, trees.get(r.sessionId), o.advantages, trainedAt));
}
