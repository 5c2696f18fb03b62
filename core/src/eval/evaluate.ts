import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine } from '../contracts/engine';
import type { Harness } from '../contracts/harness';
import type { OracleTurn, Task } from '../contracts/task';
import type { DependencyContainer } from 'tsyringe';
import type { InfraClass } from '../contracts/tree';
import { ServiceTokens as Tokens } from '../6-rollout/tokens';
import type { RolloutJob, RolloutReport } from '../6-rollout/runner';
import { countStart } from '../util/starts';
import { oracleOf } from './oracle';

/** One row of an evaluation: a harness × category (or `all`). */
export interface EvalRow {
  harness: string;
  category: string;
  tasks: number;
  /** Samples that ended in a scored outcome (infra failures excluded). */
  samples: number;
  /** Mean pass over scored samples, averaged per task. */
  pass1: number;
  /** Share of tasks with at least one passing sample among k. */
  passk: number;
  /** Samples lost to infrastructure failures: reported apart, never counted as failures. */
  infra: number;
  /** Those infrastructure failures by class (`harness-start`: stuck or dead before its first call). */
  faults: Partial<Record<InfraClass, number>>;
}

export interface EvalReport {
  k: number;
  rows: EvalRow[];
  reports: RolloutReport[];
}

export interface EvalOptions {
  /**
   * Where the evaluation's services come from: a run's `scope()` (held-out evaluation, sft's
   * demonstrations) or `clawgym eval`'s own run container. Its proxy, runner, call store, folder
   * and run id are used as composed — a plugin that replaces the proxy or the runner is used here
   * as in training.
   */
  scope: DependencyContainer;
  tasks: readonly Task[];
  harnesses: readonly { harness: Harness; options?: Record<string, unknown> }[];
  /**
   * An engine of the evaluation's own, given the task of each rollout (the oracle and null
   * engines): it replaces the scope's engine in the scope. Default: the scope's engine.
   */
  engine?: (taskOf: (rolloutId: string) => Task | undefined) => Engine;
  k: number;
  /** Ceiling of generated tokens per call (scripted oracles writing whole files need more than a model). */
  maxTokens?: number;
  /** Stops the evaluation: no new rollouts, running ones cancelled, no eval.json written. */
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, report: RolloutReport) => void;
}

/** Pass@1 and pass@k per harness and category from rollout reports. */
export function summarize(reports: readonly RolloutReport[], categoryOf: (taskId: string) => string, k: number): EvalRow[] {
  const groups = new Map<string, RolloutReport[]>();
  for (const r of reports) {
    for (const key of [`${r.request.harness}\u0000${categoryOf(r.request.taskId)}`, `${r.request.harness}\u0000all`]) {
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
  }
  return [...groups].map(([key, rs]) => {
    const [harness, category] = key.split('\u0000') as [string, string];
    const byTask = new Map<string, RolloutReport[]>();
    for (const r of rs) byTask.set(r.request.taskId, [...(byTask.get(r.request.taskId) ?? []), r]);
    let pass1 = 0; let passk = 0; let scoredTasks = 0; let samples = 0; let infra = 0;
    const faults: Partial<Record<InfraClass, number>> = {};
    for (const tr of byTask.values()) {
      const scored = tr.filter((r) => r.outcome !== 'infra-error');
      infra += tr.length - scored.length;
      for (const r of tr) if (r.outcome === 'infra-error') faults[r.infraClass ?? 'runner'] = (faults[r.infraClass ?? 'runner'] ?? 0) + 1;
      samples += scored.length;
      if (scored.length === 0) continue;
      scoredTasks++;
      const passes = scored.filter((r) => r.verdict?.pass).length;
      pass1 += passes / scored.length;
      passk += passes > 0 ? 1 : 0;
    }
    return { harness, category, tasks: byTask.size, samples, pass1: scoredTasks ? pass1 / scoredTasks : 0, passk: scoredTasks ? passk / scoredTasks : 0, infra, faults };
  }).sort((a, b) => a.harness.localeCompare(b.harness) || (a.category === 'all' ? 1 : b.category === 'all' ? -1 : a.category.localeCompare(b.category)));
}

/** One rollout as `eval.json` lists it. */
export function evalRollout(r: RolloutReport) {
  return { rolloutId: r.rolloutId, sessionId: r.sessionId, taskId: r.request.taskId, harness: r.request.harness, tags: r.request.tags, outcome: r.outcome, ...(r.infraClass ? { infraClass: r.infraClass } : {}), reward: r.reward, pass: r.verdict?.pass ?? null, details: r.details, calls: r.calls, durationMs: r.durationMs, ...(r.phases ? { phases: r.phases } : {}), ...(r.fault ? { fault: r.fault } : {}) };
}
export type EvalRollout = ReturnType<typeof evalRollout>;

/** Oracle turns made with `harness`'s own tools (see {@link Harness.oracleCall}). */
export function oracleFor(harness: Harness, turns: readonly OracleTurn[]): OracleTurn[] {
  const call = harness.oracleCall?.bind(harness);
  return call ? turns.map((turn) => ({ toolCalls: turn.toolCalls.map((c) => call(c)) })) : [...turns];
}

/**
 * Evaluate: every task × harness × k samples as real rollouts (sandbox, proxy, harness,
 * verifier), summarised as Pass@1 and pass@k per harness and category, and written to
 * `<runDir>/eval.json`.
 */
export async function evaluate(o: EvalOptions): Promise<EvalReport> {
  const runDir = o.scope.resolve(Tokens.RunDir);
  await mkdir(runDir, { recursive: true });
  const attempt = await countStart(runDir, 'attempts');
  const taskByRollout = new Map<string, { task: Task; harness: Harness }>();
  const jobs: RolloutJob[] = [];
  o.harnesses.forEach(({ harness, options }) => {
    o.tasks.forEach((task, t) => {
      for (let s = 0; s < o.k; s++) {
        // An evaluation restarted after a kill uses fresh ids: the killed attempt's call files
        // stay as they were, and no session appends into another's (call indices 0,1,0,1,2).
        const rolloutId = `eval-${harness.name}-${t}-${s}${attempt > 1 ? `-a${attempt}` : ''}`;
        taskByRollout.set(rolloutId, { task, harness });
        jobs.push({ rolloutId, step: 0, task, harness, harnessOptions: options ?? {} });
      }
    });
  });
  if (o.engine) {
    // Engines that play oracles read them synchronously: make the asynchronous ones first, and
    // in each harness's own tools.
    const ready = new Map<Task, Map<Harness, Task>>();
    for (const t of o.tasks) {
      const turns = await oracleOf(t);
      ready.set(t, new Map(o.harnesses.map(({ harness }) => [harness, { ...t, oracle: turns && oracleFor(harness, turns) }])));
    }
    const engine = o.engine((id) => { const j = taskByRollout.get(id); return j && ready.get(j.task)?.get(j.harness); });
    o.scope.register(Tokens.Engine, { useValue: engine });
  }
  if (o.maxTokens !== undefined) o.scope.register(Tokens.ProxySettings, { useValue: { ...o.scope.resolve(Tokens.ProxySettings), maxTokens: o.maxTokens } });
  const proxy = o.scope.resolve(Tokens.Proxy);
  const runner = o.scope.resolve(Tokens.Runner);
  const socketPath = o.scope.resolve(Tokens.ProxySocket);
  // Started inside the try: a proxy that fails to listen is still stopped, and the process can exit.
  try {
    await proxy.start();
    // A socket file left by a killed evaluation of this directory refuses listen (EADDRINUSE).
    await rm(socketPath, { force: true });
    await proxy.listenUnix(socketPath);
    let done = 0;
    const reports = await runner.run(jobs, o.signal, (e) => { if (e.kind === 'done' && e.report) o.onProgress?.(++done, jobs.length, e.report); });
    const categories = new Map(o.tasks.map((t) => [t.id, t.category]));
    const rows = summarize(reports, (id) => categories.get(id) ?? '?', o.k);
    if (!o.signal?.aborted) await writeFile(join(runDir, 'eval.json'), `${JSON.stringify({ k: o.k, rows, rollouts: reports.map(evalRollout) }, null, 2)}\n`);
    return { k: o.k, rows, reports };
  } finally {
    await proxy.stop();
  }
}
