import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import { metricsFile, readMetrics } from './metrics-log';
import { chartsOf, renderReport } from './html';

/** Write `<runDir>/report.html` from the run's metrics; returns its path. */
export async function writeReport(runDirArg: string): Promise<string> {
  const runDir = resolve(runDirArg);
  if (!existsSync(metricsFile(runDir))) {
    throw new ClawGymError(ErrorCodes.USAGE, `no metrics in ${runDir} (expected metrics.jsonl)`, { hint: 'Pass a run directory made by clawgym run, e.g. runs/default.' });
  }
  const events = await readMetrics(runDir);
  const steps = events.filter((e) => e.kind === 'step');
  const evals = events.filter((e) => e.kind === 'eval');
  const pct = (x: unknown) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '-');
  const summary: Record<string, string> = {
    run: runDir,
    steps: String(steps.length ? steps[steps.length - 1]!.step : 0),
    'held-out Pass@1, first → last': evals.length ? `${pct(evals[0]!.values.pass1)} → ${pct(evals[evals.length - 1]!.values.pass1)}` : '-',
    'rollouts (infra failures)': `${steps.reduce((n, e) => n + Number(e.values.rollouts ?? 0), 0)} (${steps.reduce((n, e) => n + Number(e.values.infra ?? 0), 0)})`,
  };
  const file = join(runDir, 'report.html');
  await writeFile(file, renderReport(`ClawGym run ${basename(runDir)}`, chartsOf(events), summary));
  return file;
}
