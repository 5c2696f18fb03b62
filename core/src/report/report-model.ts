import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { RunLock } from '../contracts/lock';
import { formatLock, LOCK_FILE } from './lock-diff';
import { costSummary } from './cost-summary';
import { lengthRatio } from './lengths';
import { ClawGymError, ErrorCodes } from '../errors';
import { chartsOf, type Chart } from './charts';
import { metricsFile, readMetrics } from './metrics-log';
import { RolloutIndex } from './rollout-index';
import { readRollouts, rolloutsFile, type RolloutEntry } from './rollout-log';
import { StepAggregates } from './step-aggregates';

/** Rows per page of the list, as data files or embedded scripts. */
export const INDEX_PAGE = 10_000;

/** What a report is made of, before it is written or served: charts, summary and the list. */
export interface ReportModel {
  title: string;
  runDirs: string[];
  names: string[];
  charts: Chart[];
  summary: Record<string, string>;
  /** Tables under the summary: each run's lock (`clawgym.lock.json`), its costs. */
  tables: ReportTable[];
  index: RolloutIndex;
}

/** A titled table of the report: one row per line, a label and its value. */
export interface ReportTable { title: string; rows: [string, string][] }

/** The currency of the run's price table (its config.json), when it has one. */
function currencyOf(runDir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')) as { prices?: { currency?: string } }).prices?.currency;
  } catch {
    return undefined;
  }
}

/** The run's lock as rows (what `clawgym lock` prints), when its folder has one. */
function lockTable(runDir: string, prefix: string): ReportTable | undefined {
  const file = join(runDir, LOCK_FILE);
  if (!existsSync(file)) return undefined;
  const lock = JSON.parse(readFileSync(file, 'utf8')) as RunLock;
  return { title: `${prefix}run lock (${LOCK_FILE})`, rows: formatLock(lock).map((l) => { const m = /^(\S+)\s+(.*)$/.exec(l)!; return [m[1]!, m[2]!]; }) };
}

const pct = (x: unknown) => (typeof x === 'number' ? `${(100 * x).toFixed(1)}%` : '-');

/** Run names as the overlay shows them: the folder names, made unique. */
function namesOf(runDirs: readonly string[]): string[] {
  const names = runDirs.map((d) => basename(d));
  return names.map((n, i) => (names.indexOf(n) === i ? n : `${n} (${i + 1})`));
}

/**
 * Read the runs once: metrics for the charts and the summary, and the rollout log streamed
 * into the list and the per-step figures. `onEntry` sees every entry with its ordinal (the
 * server keeps them to open rollouts on demand; the writer reads the log again instead).
 */
export async function reportModel(runDirArgs: readonly string[], onEntry?: (e: RolloutEntry, ord: number, run: number) => void): Promise<ReportModel> {
  const runDirs = runDirArgs.map((d) => resolve(d));
  for (const runDir of runDirs) {
    if (!existsSync(metricsFile(runDir)) && !existsSync(rolloutsFile(runDir))) {
      throw new ClawGymError(ErrorCodes.USAGE, `no metrics in ${runDir} (expected metrics.jsonl)`, { hint: 'Pass a run directory made by clawgym run, e.g. runs/default.' });
    }
  }
  const names = namesOf(runDirs);
  const index = new RolloutIndex();
  const figures = [];
  const summary: Record<string, string> = {};
  const tables: ReportTable[] = [];
  for (const [i, runDir] of runDirs.entries()) {
    const events = await readMetrics(runDir);
    const steps = new StepAggregates();
    let logged = 0; let infra = 0; let trained = 0; let reuse = 0; let later = 0;
    for await (const e of readRollouts(runDir)) {
      steps.add(e);
      const ord = index.add(e, names[i]!);
      onEntry?.(e, ord, i);
      logged++;
      if (e.outcome === 'infra-error') infra++;
      trained += e.tree?.trainedTokens ?? 0;
      reuse += e.tito.reuse; later += e.tito.reuse + e.tito.forks;
    }
    const currency = currencyOf(runDir);
    figures.push({ name: names[i]!, events, steps, ...(currency ? { currency } : {}) });
    const stepEvents = events.filter((e) => e.kind === 'step');
    const evals = events.filter((e) => e.kind === 'eval' && typeof e.values.pass1 === 'number');
    const withSe = (e: (typeof evals)[number]) => `${pct(e.values.pass1)}${typeof e.values['pass1/se'] === 'number' ? ` ± ${pct(e.values['pass1/se'])}` : ''}`;
    const p = runDirs.length > 1 ? `${names[i]}: ` : '';
    summary[`${p}run`] = runDir;
    summary[`${p}steps`] = String(stepEvents.length ? stepEvents[stepEvents.length - 1]!.step : 0);
    summary[`${p}held-out Pass@1, first → last`] = evals.length ? `${withSe(evals[0]!)} → ${withSe(evals[evals.length - 1]!)}` : '-';
    summary[`${p}rollouts (infra failures)`] = logged
      ? `${logged} (${infra})`
      : `${stepEvents.reduce((n, e) => n + Number(e.values.rollouts ?? 0), 0)} (${stepEvents.reduce((n, e) => n + Number(e.values.infra ?? 0), 0)}); no rollout log in this run folder, so no rollout list`;
    if (logged) summary[`${p}trained tokens, TITO reuse`] = `${trained.toLocaleString('en')}, ${later ? pct(reuse / later) : '-'}`;
    Object.assign(summary, costSummary(events, currency, p));
    const lengths = lengthRatio(events);
    if (lengths) summary[`${p}rollout length, trained / finished`] = lengths;
    const lock = lockTable(runDir, p);
    if (lock) tables.push(lock);
  }
  const title = runDirs.length > 1 ? `ClawGym runs ${names.join(' vs ')}` : `ClawGym run ${names[0]}`;
  return { title, runDirs, names, charts: chartsOf(figures), summary, tables, index };
}

/** The list's rows in pages. */
export function indexPages(index: RolloutIndex): { rows: unknown[] }[] {
  const pages: { rows: unknown[] }[] = [];
  for (let i = 0; i < index.rows.length; i += INDEX_PAGE) pages.push({ rows: index.rows.slice(i, i + INDEX_PAGE) });
  return pages;
}
