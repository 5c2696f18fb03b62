import { join } from 'node:path';
import type { MetricsEvent } from '../contracts/reporter';
import { evaluate } from '../eval/evaluate';
import type { RunServices } from './compose';
import type { ProgressTracker } from './progress';
import { refuseAllInfraEval } from './infra-guard';
import type { RunCost } from './cost';

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * Held-out evaluation inside a run, at `step`: every test task through the evaluation harnesses
 * as real rollouts with the kernel's hooks (`beforeRollout`, `onModelCall`, `afterRollout`), in
 * a scope of its own (`<runDir>/eval/step-N`, its own call store). Returns the metrics event:
 * Pass@1 per harness × category and overall; nothing when `signal` interrupted it (an
 * interrupted evaluation is not one: a resumed run evaluates that step again). An evaluation
 * whose every rollout was an infrastructure failure measured nothing and stops the run.
 */
export async function heldOutEval(s: RunServices, o: { name: string; runDir: string; step: number; progress: ProgressTracker; signal?: AbortSignal; cost?: RunCost }): Promise<{ event: MetricsEvent; text: string } | undefined> {
  const { config } = s.kernel;
  const started = Date.now();
  const dir = join(o.runDir, 'eval', `step-${o.step}`);
  const runId = `${o.name}-eval`;
  o.progress.phase('eval', o.step, s.tasks.test.length * s.evalHarnesses.length);
  const report = await evaluate({
    onProgress: (done, total) => o.progress.update({ done, total, inFlight: Math.min(config.run.concurrency, total - done) }),
    scope: s.scope(dir, runId), tasks: s.tasks.test, harnesses: s.evalHarnesses, k: 1, signal: o.signal,
  });
  if (o.signal?.aborted) return undefined;
  refuseAllInfraEval(`the held-out evaluation at step ${o.step}`, report.reports);
  const values: Record<string, number> = {};
  for (const r of report.rows) values[`pass1/${r.harness}/${r.category}`] = r.pass1;
  const all = report.rows.filter((r) => r.category === 'all');
  values.pass1 = mean(all.map((r) => r.pass1));
  // The binomial standard error over the scored samples: how far apart two evaluations must be to differ.
  values['pass1/n'] = all.reduce((n, r) => n + r.samples, 0);
  values['pass1/se'] = values['pass1/n'] ? Math.sqrt(values.pass1 * (1 - values.pass1) / values['pass1/n']) : 0;
  o.progress.pass1 = values.pass1;
  // What the evaluation cost (its rollouts; the engine and trainer held through it), and the run's totals after it.
  if (o.cost) Object.assign(values, o.cost.evaluation(report.reports, (Date.now() - started) / 1000));
  return {
    event: { kind: 'eval', step: o.step, time: Date.now(), values },
    text: `eval at step ${o.step}: held-out Pass@1 ${(100 * values.pass1).toFixed(1)}% (${s.tasks.test.length} tasks)`,
  };
}
