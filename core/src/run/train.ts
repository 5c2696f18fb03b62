import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { MetricsEvent, RunProgress } from '../contracts/reporter';
import type { ResolvedConfig } from '../config/schema';
import { provider } from '../kernel/create';
import type { Logger } from '../contracts/plugin';
import { Tokens } from './tokens';
import { readMetrics } from '../report/metrics-log';
import { appendRollouts } from '../report/rollout-log';
import { checkpointStep, saveCheckpoint } from '../9-train/checkpoint';
import { composeRun, type RunServices } from './compose';
import { heldOutEval } from './held-out';
import { ProgressTracker } from './progress';
import { Reporting } from './reporting';
import { HookStage } from '../kernel/hooks';
import type { Kernel } from '../kernel/kernel';
import { RunStateFile } from './state';
import { runStep, type StepServices } from './step';
import { AsyncLoop } from './async/async-loop';
import { stepLine, stepMetrics, stepRollouts } from './step-metrics';
import { InfraGuard } from './infra-guard';
import { FingerprintWatch } from '../3-harness/fingerprint/watch';
import { lockRunDir } from './lock';
import { runDirWriteError } from '../util/write-failure';
import { CallStore } from '../5-records/call-store';
import type { RecordStore } from '../contracts/records';
import { frozenConfig } from './frozen-config';
import { RunCost } from './cost';
import type { RunLock } from '../contracts/lock';
import { collectLock } from './lock/collect';
import { readLock, refuseUnlike, withRunFingerprints, writeLock } from './lock/file';
import { LOCK_FILE } from '../report/lock-diff';

/** The run's folder and state: resumed where it stopped, with the steps already evaluated; the frozen config written. */
async function openRun(config: ResolvedConfig, runDir: string, resume?: boolean): Promise<{ state: RunStateFile; evaluated: Set<number>; cost: RunCost }> {
  const state = await RunStateFile.open(runDir, { resume, steps: config.run.steps });
  // A kill between a step's checkpoint and its state: the checkpoint has the step; do not train it twice.
  const saved = resume ? await checkpointStep(join(runDir, 'checkpoint')) : undefined;
  if (saved !== undefined && saved > state.state.step) await state.finishStep(saved);
  // The steps already evaluated are the eval events in the metrics (one is appended as each
  // evaluation ends): a resumed run evaluates each step once.
  const previous = resume ? await readMetrics(runDir) : [];
  const evaluated = new Set(previous.filter((e) => e.kind === 'eval').map((e) => e.step));
  // The run's cost totals go on from the last event that had them.
  const cost = new RunCost(config.prices, previous);
  await mkdir(runDir, { recursive: true });
  await writeFile(join(runDir, 'config.json'), `${JSON.stringify(frozenConfig(config), null, 2)}\n`);
  return { state, evaluated, cost };
}

/**
 * The run's own parts are taps like any plugin's: the reporters write a line when the run starts
 * or resumes with work to do (`runStart`), get each step's metrics (`stepEnd`, before plugins' taps) and render
 * (`runEnd`, first, so a failing plugin tap cannot keep the report from being written); the live
 * display starts each step's count (`stepStart`) and counts generated tokens (`onModelCall`); the
 * fingerprint watch compares what each harness sent with what it sent first (`afterRollout`).
 */
function tapRunParts(kernel: Kernel, parts: { reporting: Reporting; progress: ProgressTracker; fingerprints: FingerprintWatch; startStep: number; idle: boolean; rolloutsPerStep: number }): void {
  const { reporting, progress, fingerprints } = parts;
  const hooks = kernel.hooks;
  hooks.runStart.tapPromise({ name: 'clawgym:reporters', stage: HookStage.EARLY }, async () => {
    if (!parts.idle) await reporting.emit({ kind: 'info', step: parts.startStep, time: Date.now(), values: { event: parts.startStep === 0 ? 'start' : 'resume' } });
  });
  hooks.stepStart.tapPromise({ name: 'clawgym:progress', stage: HookStage.EARLY }, async ({ step }) => progress.phase('rollouts', step, parts.rolloutsPerStep));
  hooks.onModelCall.tapPromise({ name: 'clawgym:progress', stage: HookStage.LATE }, async (r) => { progress.generated += r.outputIds.length; });
  hooks.afterRollout.tapPromise({ name: 'clawgym:fingerprints', stage: HookStage.EARLY }, (r) => fingerprints.observe([r.fingerprint], r.request.step === 0 ? 'held-out evaluation' : `step ${r.request.step}`));
  hooks.stepEnd.tapPromise({ name: 'clawgym:reporters', stage: HookStage.EARLY }, (r) => reporting.emit({ kind: 'step', step: r.step, time: Date.now(), values: r.metrics }));
  hooks.runEnd.tapPromise({ name: 'clawgym:reporters', stage: HookStage.EARLY }, async () => { await reporting.render(); });
}

/**
 * The run's lock, written into its folder; with `frozen`, compared with that lock first and the
 * run refused (its services released) when anything differs. A frozen resume is compared with
 * the run's own lock too (but its config's hash: `--steps` may extend it): the run goes on with
 * what it started with, even where the lock beside the config was written again since.
 */
async function lockRun(s: RunServices, config: ResolvedConfig, runDir: string, frozen: TrainOptions['frozen'], resume?: boolean): Promise<void> {
  try {
    const lock = await collectLock(config, s.kernel, { runDir });
    const own = join(runDir, LOCK_FILE);
    if (frozen) refuseUnlike(frozen.lock, lock, frozen.file);
    if (frozen && resume && existsSync(own)) refuseUnlike(await readLock(own, 'the run', ''), lock, `the run's own lock (${own})`, {
      config: false, hint: 'Put back what the run started with (its lock names it), or, to train on the change, start a new run (another --name) after `clawgym lock`.',
    });
    await writeLock(own, lock);
  } catch (err) {
    await s.dispose();
    throw err;
  }
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
  /** Where plugin log lines go (default: the console). */
  logger?: Logger;
  /** `--frozen`: the lock the run must match (and the file it came from), else it refuses to start. */
  frozen?: { lock: RunLock; file: string };
}

/**
 * `clawgym run`: the RL loop, composed of parts that each live in a file of their own: the run
 * (`compose.ts`: every service from the run container), its state (`state.ts`), one step
 * (`step.ts`: rollouts, trees, advantages, the trainer step), the step's metrics
 * (`step-metrics.ts`), held-out evaluation (`held-out.ts`), the reporters (`reporting.ts`) and
 * the live progress (`progress.ts`). Held-out evaluation runs at the start, every
 * `run.evalEvery` steps and at the end. Everything lands in `<run.outDir>/<name>/`: the frozen
 * config, call records, metrics (JSONL and TensorBoard), the checkpoint and evaluation results;
 * `resume` continues after the last finished step, with no step repeated and no record lost.
 */
export async function train(o: TrainOptions): Promise<{ runDir: string; steps: number }> {
  const runDir = resolve(o.config.rootDir, o.config.run.outDir, o.name ?? o.config.name);
  // One process a run folder: a second `run` or a `--resume` beside a live run is refused here.
  // eslint-disable-next-line no-console
  const lock = await lockRunDir(runDir, o.resume ? 'run --resume' : 'run', (m) => (o.logger?.warn ?? console.warn)(m.trimEnd()));
  try {
    return await trainLocked(o, runDir);
  } catch (err) {
    // A run folder that cannot be written, named with the fix (anything else as it was).
    throw runDirWriteError(err, runDir, `clawgym run --resume${o.name ? ` --name ${o.name}` : ''}`);
  } finally {
    await lock.release();
  }
}

async function trainLocked(o: TrainOptions, runDir: string): Promise<{ runDir: string; steps: number }> {
  const [config, name] = [o.config, o.name ?? o.config.name];
  const { state, evaluated, cost } = await openRun(config, runDir, o.resume);
  const progress = new ProgressTracker(state.state.step, config.run.steps, o.onProgress);
  const s = await composeRun({ config, purpose: 'run', name, runDir, logger: o.logger, onRollout: progress.onRollout });
  await lockRun(s, config, runDir, o.frozen, o.resume);
  const [kernel, engine, trainer] = [s.kernel, s.engine!, s.trainer!];
  // eslint-disable-next-line no-console
  const logger = o.logger ?? { info: (m: string) => console.log(m), warn: (m: string) => console.warn(`warning: ${m}`) };
  const reporting = new Reporting(s.reporters, { runId: name, runDir }, logger);
  // A call record that cannot be written (the run folder full, read-only or removed) stops the step
  // at once (so does a frozen run's harness sending what was not locked): its rollouts are not
  // trained, and the state stays at the last finished step.
  const unwritable = watchWrites(s.container.resolve(Tokens.CallStore), o.signal);
  o = { ...o, signal: unwritable.signal };
  // What each harness sends the model, pinned at its first rollout: a CLI upgrade that changes it
  // is told, naming what changed (under --frozen it stops the run). A resume of a finished,
  // evaluated run trains and evaluates nothing: no start line for it.
  const fingerprints = new FingerprintWatch(runDir, (m) => logger.warn(m), o.frozen && { file: o.frozen.file, locked: lockedFingerprints(o.frozen.lock), stop: unwritable.fail });
  tapRunParts(kernel, { reporting, progress, fingerprints, startStep: state.state.step, idle: state.state.step >= config.run.steps && evaluated.has(state.state.step), rolloutsPerStep: config.run.tasksPerStep * config.run.groupSize * s.harnesses.length });
  const emit = async (event: MetricsEvent, text: string) => { await reporting.emit(event); o.onEvent?.(event, text); };
  const checkpoint = join(runDir, 'checkpoint');
  if (state.state.step > 0) await trainer.load(checkpoint);
  // Engines in other processes serve whatever they last loaded: the resumed (or initial) weights,
  // published before the first rollout — SkyRL's FSDP server samples only published weights.
  await engine.syncWeights?.(await trainer.publishWeights?.());
  const policyLoss = await provider(kernel, 'policyLoss', config.policyLoss);
  const heldOut = async (step: number) => {
    if (evaluated.has(step)) return;
    const done = await heldOutEval(s, { name, runDir, step, progress, signal: o.signal, cost });
    // An interrupted evaluation is not an evaluation: no event, so --resume runs it again (under fresh ids).
    if (!done) return;
    await emit(done.event, done.text);
    evaluated.add(step);
  };
  const [proxy, runner, socketPath] = [s.container.resolve(Tokens.Proxy), s.container.resolve(Tokens.Runner), s.container.resolve(Tokens.ProxySocket)];

  let status: 'completed' | 'cancelled' | 'failed' = 'completed';
  const services: StepServices = { kernel, runner, engine, trainer, policyLoss, tasks: s.tasks.train, harnesses: s.harnesses, records: proxy };
  let asyncLoop: AsyncLoop | undefined;
  const infra = new InfraGuard(config.run.maxInfraSteps);
  try {
    // Inside the try: a proxy that fails to listen is still stopped, so the process can exit.
    await proxy.start();
    await rm(socketPath, { force: true });
    await proxy.listenUnix(socketPath);
    await kernel.hooks.runStart.promise({ runId: name, runDir });
    if (state.state.step === 0) await heldOut(0);
    if (config.run.async && state.state.step < config.run.steps) {
      asyncLoop = new AsyncLoop(services, state, config.run.async.maxStaleness, undefined, config.run.async.maxVersionSpan, config.run.async.policy);
      await asyncLoop.start(o.signal);
    }
    for (let step = state.state.step + 1; step <= config.run.steps; step++) {
      if (o.signal?.aborted) { status = 'cancelled'; break; }
      const started = Date.now();
      const attempt = await state.startStep(step);
      await kernel.hooks.stepStart.promise({ runId: name, step });
      const tokensBefore = progress.generated;
      const version = trainer.policyVersion();
      const outcome = asyncLoop ? await asyncLoop.step() : await runStep(services, step, attempt, o.signal);
      if (!outcome) { status = 'cancelled'; break; }
      unwritable.check(); // a step with a call it could not record is not trained
      const tokens = progress.generated - tokensBefore;
      progress.update({ phase: 'update', tokensPerSec: tokens / Math.max(1e-3, outcome.rolloutSeconds) });
      // The checkpoint, then the state: a kill in between redoes nothing twice.
      if (outcome.async) await state.stageUnits(step, outcome.async.units);
      await saveCheckpoint(trainer, checkpoint, step);
      // After the checkpoint (a kill before it redoes the step: its rollouts are logged once, by
      // the attempt that trained) and before the state (a resume after it does not redo it).
      await appendRollouts(runDir, stepRollouts(step, outcome, version));
      await state.finishStep(step);
      const seconds = (Date.now() - started) / 1000;
      progress.stepDone(seconds, step);
      const values = { ...stepMetrics(outcome, s.harnesses, { seconds, tokens }), ...outcome.async?.values, ...cost.step(outcome, seconds) };
      await kernel.hooks.stepEnd.promise({ runId: name, step, metrics: values });
      o.onEvent?.({ kind: 'step', step, time: Date.now(), values }, stepLine(step, config.run.steps, values, outcome));
      infra.step(step, outcome.reports);
      if (config.run.evalEvery > 0 && step % config.run.evalEvery === 0 && step !== config.run.steps) await heldOut(step);
    }
    await asyncLoop?.stop(); // rollouts beyond the last step are not trained: cancel them
    asyncLoop = undefined;
    unwritable.check();
    if (status === 'completed' && state.state.step === config.run.steps) await heldOut(state.state.step);
    if (o.signal?.aborted) status = 'cancelled';
    unwritable.check();
  } catch (err) {
    status = 'failed';
    throw unwritable.failure() ?? err;
  } finally {
    // Each part closed even when another fails (a full disk fails several): nothing left open
    // keeps the process alive after the command has failed. The lock names the fingerprints the
    // harnesses showed, before the report shows it.
    await closeAll([
      () => asyncLoop?.stop(), () => proxy.stop(),
      () => withRunFingerprints(join(runDir, LOCK_FILE), runDir).catch(() => undefined),
      () => kernel.hooks.runEnd.promise({ runId: name, status, steps: state.state.step }), () => s.dispose(),
    ], status === 'failed');
  }
  return { runDir, steps: state.state.step };
}

/**
 * A signal that aborts with `outer`, on the first write `store` cannot make, or when `fail` is
 * called (a frozen run's harness sending what was not locked); `check` throws the first failure.
 */
function watchWrites(store: RecordStore, outer?: AbortSignal) {
  const controller = new AbortController();
  let failure: Error | undefined;
  const fail = (err: Error) => { failure ??= err; controller.abort(); };
  if (store instanceof CallStore) store.onWriteFailure(fail);
  if (outer?.aborted) controller.abort();
  else outer?.addEventListener('abort', () => controller.abort(), { once: true });
  return {
    signal: controller.signal,
    fail,
    failure: () => failure,
    check: () => { if (failure) throw failure; },
  };
}

/** The fingerprints a lock holds, by harness (those a run had seen when it was written). */
const lockedFingerprints = (lock: RunLock) => Object.fromEntries(Object.entries(lock.harnesses).map(([name, h]) => [name, h.fingerprint]));

/** Run each of `parts` in order, every one even if others throw; the first error is thrown after (unless `quiet`, when the run failed already). */
async function closeAll(parts: (() => unknown)[], quiet: boolean): Promise<void> {
  let first: unknown;
  for (const part of parts) {
    try { await part(); } catch (err) { first ??= err; }
  }
  if (first !== undefined && !quiet) throw first;
}
