import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Engine } from '../contracts/engine';
import type { MetricsEvent, RunProgress } from '../contracts/reporter';
import type { Task } from '../contracts/task';
import type { Trainer } from '../contracts/trainer';
import type { ResolvedConfig } from '../config/schema';
import { ClawGymError, ErrorCodes } from '../errors';
import { evaluate } from '../eval/evaluate';
import { writeReport } from '../report/report';
import { createKernel, provider, slotOptions, trainerOptions, type SlotRef } from '../kernel/create';
import { ServingProxy } from '../proxy/server';
import { CallStore } from '../rollout/call-store';
import { RolloutRunner, type RolloutJob } from '../rollout/runner';
import { buildStepTrees, computeStepAdvantages } from '../tree/pipeline';
import { isTrainable } from '../tree/trainable';
import { saveCheckpoint } from '../train/checkpoint';
import { Rng } from '../util/rng';
import { metricsFile, readMetrics } from './metrics';

/** What survives a kill: the last finished step, and how often each step was started. */
interface RunState { step: number; stepStarts: Record<string, number> }

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Plain data of the config, for `config.json` in the run directory (plugin objects by name). */
function frozenConfig(config: ResolvedConfig) {
  return JSON.parse(JSON.stringify(config, (k, v) => (v && typeof v === 'object' && typeof v.apply === 'function' ? `[plugin ${v.name}]` : v)));
}

export interface TrainOptions {
  config: ResolvedConfig;
  name?: string;
  resume?: boolean;
  signal?: AbortSignal;
  /** One line per event (the CLI prints them or draws a live display). */
  onEvent?: (event: MetricsEvent, text: string) => void;
  /** Where the run is between events (rollouts done and running, reward so far, tokens/s, ETA), for a live display. */
  onProgress?: (progress: RunProgress) => void;
}

/**
 * `clawgym run`: the RL loop. Each step samples Task×Harness groups from the train split, runs
 * them as real rollouts through the configured harnesses and sandboxes against the serving proxy
 * in front of the engine, rebuilds and filters their prefix trees, asks the configured
 * algorithm for advantages (through `computeAdvantage`) and takes one trainer step. Held-out
 * evaluation runs at the start, every `run.evalEvery` steps and at the end. Everything lands in
 * `<run.outDir>/<name>/`: the frozen config, call records, metrics (JSONL), the checkpoint and
 * evaluation results; `resume` continues after the last finished step, with no step repeated and
 * no record lost.
 */
export async function train(o: TrainOptions): Promise<{ runDir: string; steps: number }> {
  const { config } = o;
  const name = o.name ?? config.name;
  const runDir = resolve(config.rootDir, config.run.outDir, name);
  const statePath = join(runDir, 'state.json');
  let state: RunState = { step: 0, stepStarts: {} };
  // Written beside, then renamed over: a kill mid-write never leaves a truncated state to resume from.
  const saveState = async () => {
    await writeFile(`${statePath}.tmp`, `${JSON.stringify(state)}\n`);
    await rename(`${statePath}.tmp`, statePath);
  };
  if (existsSync(statePath)) {
    if (!o.resume) throw new ClawGymError(ErrorCodes.USAGE, `run ${runDir} already exists`, { hint: 'Pass --resume to continue it, or --name to start another.' });
    state = JSON.parse(await readFile(statePath, 'utf8')) as RunState;
    if (state.step > config.run.steps) {
      throw new ClawGymError(ErrorCodes.USAGE, `run ${runDir} has already trained ${state.step} steps, more than run.steps (${config.run.steps})`, { hint: `Resume with --steps ${state.step} or more, or start another run with --name.` });
    }
  }
  // The steps already evaluated are the eval events in the metrics (one is appended as each
  // evaluation ends): a resumed run evaluates each step once.
  const evaluated = new Set(o.resume ? (await readMetrics(runDir)).filter((e) => e.kind === 'eval').map((e) => e.step) : []);
  await mkdir(runDir, { recursive: true });
  await writeFile(join(runDir, 'config.json'), `${JSON.stringify(frozenConfig(config), null, 2)}\n`);
  const kernel = await createKernel(config, { runId: name });
  const emit = async (event: MetricsEvent, text: string) => {
    await appendFile(metricsFile(runDir), `${JSON.stringify(event)}\n`);
    o.onEvent?.(event, text);
  };

  const seed = config.run.seed;
  const engine: Engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), { runDir, seed, rootDir: config.rootDir });
  const trainer: Trainer = await (await provider(kernel, 'trainer', config.trainer)).create(trainerOptions(config), { runDir, seed, rootDir: config.rootDir });
  const checkpoint = join(runDir, 'checkpoint');
  if (state.step > 0) await trainer.load(checkpoint);
  const sandboxes = await provider(kernel, 'sandbox', config.sandbox);
  const harnessesOf = (slots: readonly SlotRef[]) => Promise.all(slots.map(async (slot) => ({ harness: await provider(kernel, 'harness', slot), options: slotOptions(slot) })));
  const harnesses = await harnessesOf(config.harnesses);
  const evalHarnesses = config.run.evalHarnesses ? await harnessesOf(config.run.evalHarnesses) : harnesses;
  const trainTasks: Task[] = [];
  const testTasks: Task[] = [];
  for (const slot of config.tasks) {
    const suite = await provider(kernel, 'taskSuite', slot);
    trainTasks.push(...await suite.tasks('train', { seed, limit: 1000, options: slotOptions(slot) }));
    testTasks.push(...await suite.tasks('test', { seed, limit: config.run.evalTasks, options: slotOptions(slot) }));
  }

  // What the live display shows; the run's own numbers stay in metrics.jsonl.
  const live: RunProgress = { phase: 'eval', step: state.step, steps: config.run.steps, done: 0, inFlight: 0, total: 0 };
  let generated = 0;
  const stepSeconds: number[] = [];
  let rewardSum = 0;
  let rewardCount = 0;
  const progress = (p: Partial<RunProgress>) => { Object.assign(live, p); o.onProgress?.({ ...live }); };
  const proxy = new ServingProxy({ engine, store: new CallStore(join(runDir, 'calls')), runId: name, onRecord: (r) => { generated += r.outputIds.length; return kernel.hooks.onModelCall.promise(r); } });
  const socketPath = join(runDir, 'proxy.sock');
  const runner = new RolloutRunner({
    runId: name, proxy, socketPath, sandboxes, kernel, concurrency: config.run.concurrency,
    timeoutMs: config.run.rolloutTimeoutMs, infraRetries: config.run.infraRetries,
    onProgress: (e) => {
      if (e.kind === 'retry') return;
      if (e.kind === 'done' && e.report && e.report.outcome !== 'infra-error') { rewardSum += e.report.reward; rewardCount++; }
      progress({ done: e.done, inFlight: e.inFlight, total: e.total, reward: rewardCount ? rewardSum / rewardCount : undefined });
    },
  });

  const heldOut = async (step: number) => {
    if (evaluated.has(step)) return;
    progress({ phase: 'eval', step, done: 0, inFlight: 0, total: testTasks.length * evalHarnesses.length });
    const report = await evaluate({
      onProgress: (done, total) => progress({ done, total, inFlight: Math.min(config.run.concurrency, total - done) }),
      runId: `${name}-eval`, runDir: join(runDir, 'eval', `step-${step}`), tasks: testTasks, harnesses: evalHarnesses, engine, sandboxes, k: 1,
      concurrency: config.run.concurrency, timeoutMs: config.run.rolloutTimeoutMs, infraRetries: config.run.infraRetries, signal: o.signal,
    });
    // An interrupted evaluation is not an evaluation: no event, so --resume runs it again (under fresh ids).
    if (o.signal?.aborted) return;
    const values: Record<string, number> = {};
    for (const r of report.rows) values[`pass1/${r.harness}/${r.category}`] = r.pass1;
    const all = report.rows.filter((r) => r.category === 'all');
    values.pass1 = mean(all.map((r) => r.pass1));
    live.pass1 = values.pass1;
    await emit({ kind: 'eval', step, time: Date.now(), values }, `eval at step ${step}: held-out Pass@1 ${(100 * values.pass1).toFixed(1)}% (${testTasks.length} tasks)`);
    evaluated.add(step);
  };

  let status: 'completed' | 'cancelled' | 'failed' = 'completed';
  try {
    // Inside the try: a proxy that fails to listen is still stopped, so the process can exit.
    await proxy.start();
    await rm(socketPath, { force: true });
    await proxy.listenUnix(socketPath);
    await kernel.hooks.runStart.promise({ runId: name, runDir });
    if (state.step === 0) await heldOut(0);
    for (let step = state.step + 1; step <= config.run.steps; step++) {
      if (o.signal?.aborted) { status = 'cancelled'; break; }
      const started = Date.now();
      // A step restarted after a kill gets fresh rollout ids: earlier records stay, none collide.
      const attempt = (state.stepStarts[step] ?? 0) + 1;
      state.stepStarts[step] = attempt;
      await saveState();
      await kernel.hooks.stepStart.promise({ runId: name, step });
      const rng = new Rng(seed * 1_000_003 + step);
      const jobs: RolloutJob[] = [];
      for (let t = 0; t < config.run.tasksPerStep; t++) {
        const task = trainTasks[rng.int(0, trainTasks.length - 1)]!;
        for (const { harness, options } of harnesses) {
          for (let g = 0; g < config.run.groupSize; g++) jobs.push({ rolloutId: `s${step}a${attempt}-t${t}-${harness.name}-${g}`, step, task, harness, harnessOptions: options });
        }
      }
      rewardSum = 0; rewardCount = 0;
      const tokensBefore = generated;
      progress({ phase: 'rollouts', step, done: 0, inFlight: 0, total: jobs.length, reward: undefined });
      const reports = await runner.run(jobs, o.signal);
      if (o.signal?.aborted) { status = 'cancelled'; break; }
      const rolloutSeconds = (Date.now() - started) / 1000;
      const stepTokens = generated - tokensBefore;
      progress({ phase: 'update', tokensPerSec: stepTokens / Math.max(1e-3, rolloutSeconds) });
      const trees = await buildStepTrees(kernel, reports.map((r) => ({
        records: r.records,
        info: { rolloutId: r.sessionId, taskId: r.request.taskId, category: r.request.category, harness: r.request.harness, outcome: r.outcome, reward: Number.isNaN(r.reward) ? 0 : r.reward },
      })), engine.chatTemplate.stopIds[0]!);
      const algorithm = await provider(kernel, 'algorithm', config.algorithm);
      const values = algorithm.needsValues && trainer.values ? await trainer.values(trees.filter(isTrainable)) : undefined;
      const advantages = await computeStepAdvantages(kernel, trees, values);
      const metrics = await trainer.step({ trees, advantages, loss: config.loss });
      await engine.syncWeights?.();
      // The checkpoint, then the state: a kill in between redoes nothing twice.
      await saveCheckpoint(trainer, checkpoint);
      state.step = step;
      await saveState();
      const seconds = (Date.now() - started) / 1000;
      stepSeconds.push(seconds);
      progress({ etaSeconds: mean(stepSeconds) * (config.run.steps - step) });
      const scored = reports.filter((r) => r.outcome !== 'infra-error');
      const filters: Record<string, number> = {};
      for (const t of trees) for (const [k, v] of Object.entries(t.filterCounts)) filters[`filter/${k}`] = (filters[`filter/${k}`] ?? 0) + v;
      const values2: Record<string, number> = {
        reward: mean(scored.map((r) => r.reward)), pass: mean(scored.map((r) => (r.verdict?.pass ? 1 : 0))),
        rollouts: reports.length, infra: reports.length - scored.length, calls: reports.reduce((n, r) => n + r.calls, 0),
        trained: trees.filter(isTrainable).length, seconds, 'seconds/rollouts': rolloutSeconds,
        'tokens/generated': stepTokens, ...filters,
        ...Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`train/${k}`, v])),
      };
      for (const { harness } of harnesses) values2[`reward/${harness.name}`] = mean(scored.filter((r) => r.request.harness === harness.name).map((r) => r.reward));
      // Per harness × category too, when there is more than one category: where the reward moves.
      const categories = [...new Set(scored.map((r) => r.request.category))].sort();
      if (categories.length > 1) {
        for (const { harness } of harnesses) for (const c of categories) {
          const rs = scored.filter((r) => r.request.harness === harness.name && r.request.category === c);
          if (rs.length) values2[`reward/${harness.name}/${c}`] = mean(rs.map((r) => r.reward));
        }
      }
      await emit({ kind: 'step', step, time: Date.now(), values: values2 }, `step ${step}/${config.run.steps}: reward ${values2.reward!.toFixed(3)}, pass ${(100 * values2.pass!).toFixed(1)}%, ${reports.length} rollouts (${values2.infra} infra), loss ${metrics.loss.toFixed(4)}, |Δlogp| ${metrics.mismatchAbsLogp.toFixed(5)}, ${values2.seconds!.toFixed(1)} s`);
      await kernel.hooks.stepEnd.promise({ runId: name, step, metrics: values2 });
      if (config.run.evalEvery > 0 && step % config.run.evalEvery === 0 && step !== config.run.steps) await heldOut(step);
    }
    if (status === 'completed' && state.step === config.run.steps) await heldOut(state.step);
    if (o.signal?.aborted) status = 'cancelled';
  } catch (err) {
    status = 'failed';
    throw err;
  } finally {
    await proxy.stop();
    await writeReport(runDir).catch(() => undefined);
    await kernel.hooks.runEnd.promise({ runId: name, status, steps: state.step }).catch(() => undefined);
    await kernel.dispose();
  }
  return { runDir, steps: state.step };
}

