import { resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import type { Engine } from '../../contracts/engine';
import type { Task } from '../../contracts/task';
import { evaluate, type EvalRow } from '../../eval/evaluate';
import { nullEngine, oracleEngine } from '../../eval/oracle';
import { createKernel, provider, slotName, slotOptions, type SlotRef } from '../../kernel/create';
import { formatTable } from './plugins';

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

/**
 * `clawgym eval`: Pass@1 (averaged over k samples) and pass@k per harness and category, on the
 * test split, as real rollouts. `--engine oracle` plays each task's oracle (every verifier must
 * pass), `--engine null` only answers "I don't know" (every task must fail).
 */
export async function evalCommand(opts: EvalCliOptions, io: { out: (s: string) => void; err: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const kernel = await createKernel(config);
  const k = Math.max(1, Number(opts.k ?? 1));
  const limit = opts.limit ? Number(opts.limit) : config.run.evalTasks;
  const split = opts.split ?? 'test';
  const suites: SlotRef[] = opts.suite?.length ? opts.suite : config.tasks;
  const tasks: Task[] = [];
  for (const slot of suites) tasks.push(...await (await provider(kernel, 'taskSuite', slot)).tasks(split, { seed: config.run.seed, limit, options: slotOptions(slot) }));
  const harnessSlots: SlotRef[] = opts.harness?.length ? opts.harness : config.harnesses;
  const harnesses = await Promise.all(harnessSlots.map(async (slot) => ({
    harness: await provider(kernel, 'harness', slot),
    options: slotOptions(slot),
  })));
  const engineSlot: SlotRef = opts.engine ?? config.engine;
  const engineName = slotName(engineSlot);
  const name = opts.name ?? `eval-${engineName}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runDir = resolve(config.rootDir, config.run.outDir, name);
  const engine = engineName === 'oracle' ? (taskOf: (id: string) => Task | undefined) => oracleEngine(taskOf)
    : engineName === 'null' ? nullEngine()
      : await (await provider(kernel, 'engine', engineSlot)).create(slotOptions(engineSlot), { runDir, seed: config.run.seed, rootDir: config.rootDir }) as Engine;
  const sandboxes = await provider(kernel, 'sandbox', config.sandbox);
  io.err(`evaluating ${tasks.length} tasks x ${harnesses.length} harness(es) x ${k} sample(s) with engine ${engineName} (${split} split) in ${runDir}\n`);
  const report = await evaluate({
    runId: name, runDir, tasks, harnesses, engine, sandboxes, k, kernel,
    concurrency: Number(opts.concurrency ?? config.run.concurrency), timeoutMs: config.run.rolloutTimeoutMs, infraRetries: config.run.infraRetries,
    maxTokens: engineName === 'oracle' ? 1 << 20 : undefined,
    onProgress: (done, total) => { if (done === total || done % 10 === 0) io.err(`  ${done}/${total} rollouts\n`); },
  }).finally(() => sandboxes.close?.());
  await kernel.dispose();
  if (opts.json) io.out(`${JSON.stringify({ k, rows: report.rows }, null, 2)}\n`);
  else io.out(`${formatEval(report.rows, k)}\nresults: ${runDir}/eval.json\n`);
}
