import { join, resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { evaluate, type EvalRow } from '../../eval/evaluate';
import { nullEngine, oracleEngine } from '../../eval/oracle';
import { slotName, type SlotRef } from '../../kernel/create';
import { composeRun } from '../../run/compose';
import { formatTable } from './plugins';
import { preflight } from '../../doctor/preflight';
import { refuseAllInfraEval } from '../../run/infra-guard';
import { lockRunDir } from '../../run/lock';
import type { ResolvedConfig } from '../../config/schema';
import { moneyOf, rolloutCostValues, type Prices } from '../../6-rollout/cost';
import type { RolloutReport } from '../../6-rollout/runner';
import { costLine } from '../../report/cost-summary';
import { collectLock } from '../../run/lock/collect';
import { writeLock } from '../../run/lock/file';
import { LOCK_FILE } from '../../report/lock-diff';

export interface EvalCliOptions {
  config?: string;
  engine?: string;
  harness?: string[];
  suite?: string[];
  split?: 'train' | 'test';
  k?: string;
  limit?: string;
  concurrency?: string;
  json?: boolean;
  name?: string;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The terminal table of an evaluation. */
export function formatEval(rows: readonly EvalRow[], k: number): string {
  return formatTable(['HARNESS', 'CATEGORY', 'TASKS', 'SAMPLES', 'PASS@1', k > 1 ? `PASS@${k}` : 'PASS@k', 'INFRA'],
    rows.map((r) => [r.harness, r.category, String(r.tasks), String(r.samples), pct(r.pass1), pct(r.passk), String(r.infra)]));
}

/** The infrastructure failures by class (one line, empty without any): what the INFRA column holds. */
export function formatFaults(rows: readonly EvalRow[]): string {
  const all: Record<string, number> = {};
  for (const r of rows) if (r.category === 'all') for (const [c, n] of Object.entries(r.faults)) all[c] = (all[c] ?? 0) + (n ?? 0);
  const parts = Object.entries(all).sort(([a], [b]) => a.localeCompare(b)).map(([c, n]) => `${c} ${n}`);
  return parts.length ? `infrastructure failures (not in Pass@1): ${parts.join(', ')}\n` : '';
}

/**
 * What an evaluation cost, in all (keys without `cost/`): its rollouts' figures, and money under
 * the config's prices (the engine held through it, no trainer).
 */
export function evalCost(reports: readonly RolloutReport[], seconds: number, prices: Prices | undefined): Record<string, number> {
  const figures = rolloutCostValues(reports);
  const all = { ...figures, ...(prices ? moneyOf(figures, prices, { seconds, trainer: false }) : {}) };
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k.slice('cost/'.length), v]));
}

/** The config with the flags' harnesses and suites in place of its own. */
function scoped(config: ResolvedConfig, opts: EvalCliOptions): ResolvedConfig {
  return {
    ...config,
    ...(opts.harness?.length ? { harnesses: opts.harness, run: { ...config.run, evalHarnesses: undefined } } : {}),
    ...(opts.suite?.length ? { tasks: opts.suite } : {}),
  };
}

/**
 * `clawgym eval`: Pass@1 (averaged over k samples) and pass@k per harness and category, on the
 * test split, as real rollouts. `--engine oracle` plays each task's oracle (every verifier must
 * pass), `--engine null` only answers "I don't know" (every task must fail).
 */
export async function evalCommand(opts: EvalCliOptions, io: { out: (s: string) => void; err: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const k = Math.max(1, Number(opts.k ?? 1));
  const limit = opts.limit ? Number(opts.limit) : config.run.evalTasks;
  const split = opts.split ?? 'test';
  const engineSlot: SlotRef = opts.engine ?? config.engine;
  const engineName = slotName(engineSlot);
  const name = opts.name ?? `eval-${engineName}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runDir = resolve(config.rootDir, config.run.outDir, name);
  // The oracle and null engines are evaluation's own (they need each rollout's task), not providers.
  const own = engineName === 'oracle' || engineName === 'null';
  // What this evaluation uses (the flags' harnesses and suites), checked before anything starts.
  await preflight(scoped(config, opts), 'eval', { skipEngine: own });
  // One process a run folder: an evaluation into a folder another process writes is refused.
  const lock = await lockRunDir(runDir, 'eval', io.err);
  try {
    await evalLocked(opts, io, { config, own, engineSlot, engineName, k, limit, split, name, runDir });
  } finally {
    await lock.release();
  }
}

async function evalLocked(opts: EvalCliOptions, io: { out: (s: string) => void; err: (s: string) => void }, r: { config: ResolvedConfig; own: boolean; engineSlot: SlotRef; engineName: string; k: number; limit: number; split: 'train' | 'test'; name: string; runDir: string }): Promise<void> {
  const { config, own, engineSlot, engineName, k, limit, split, name, runDir } = r;
  // What this evaluation uses: the flags' engine, harnesses and suites in place of the config's.
  const used: ResolvedConfig = { ...scoped(config, opts), ...(own ? {} : { engine: engineSlot }) };
  const s = await composeRun({
    config: opts.concurrency ? { ...config, run: { ...config.run, concurrency: Number(opts.concurrency) } } : config,
    purpose: 'eval', name, runDir, engine: own ? false : engineSlot,
    harnesses: opts.harness?.length ? opts.harness : undefined, suites: opts.suite?.length ? opts.suite : undefined,
    taskLimits: { [split]: limit },
  });
  try {
    // Its own lock in its folder, as a run's: what it evaluated with (harness CLIs, model files, sandbox, packages, tasks).
    await writeLock(join(runDir, LOCK_FILE), await collectLock(used, s.kernel));
    const tasks = s.tasks[split];
    const noOracle = engineName === 'oracle' ? tasks.filter((t) => t.oracle === undefined) : [];
    // Without this a suite with no oracles reads as a 0% pipeline, not as untestable by the oracle.
    if (noOracle.length) io.err(`warning: ${noOracle.length} of ${tasks.length} task(s) have no oracle, so the oracle engine cannot pass them: ${noOracle.slice(0, 5).map((t) => t.id).join(', ')}${noOracle.length > 5 ? ', …' : ''}\n`);
    io.err(`evaluating ${tasks.length} tasks x ${s.harnesses.length} harness(es) x ${k} sample(s) with engine ${engineName} (${split} split) in ${runDir}\n`);
    const started = Date.now();
    const report = await evaluate({
      scope: s.container, tasks, harnesses: s.harnesses, k,
      engine: engineName === 'oracle' ? (taskOf) => oracleEngine(taskOf) : engineName === 'null' ? () => nullEngine() : undefined,
      maxTokens: engineName === 'oracle' ? 1 << 20 : undefined,
      onProgress: (done, total) => { if (done === total || done % 10 === 0) io.err(`  ${done}/${total} rollouts\n`); },
    });
    const cost = evalCost(report.reports, (Date.now() - started) / 1000, config.prices);
    if (opts.json) io.out(`${JSON.stringify({ k, rows: report.rows, cost }, null, 2)}\n`);
    else io.out(`${formatEval(report.rows, k)}\n${formatFaults(report.rows)}cost per task: ${costLine(cost, Math.max(1, tasks.length), config.prices?.currency)}\nresults: ${runDir}/eval.json\n`);
    refuseAllInfraEval('the evaluation', report.reports);
  } finally {
    await s.dispose();
  }
}
