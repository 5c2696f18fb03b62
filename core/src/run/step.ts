import type { Engine } from '../contracts/engine';
import type { PolicyLoss } from '../contracts/policy-loss';
import type { Task } from '../contracts/task';
import type { Trainer, TrainMetrics } from '../contracts/trainer';
import type { AdvantageResult, RolloutTree } from '../contracts/tree';
import type { Kernel } from '../kernel/kernel';
import type { HarnessSlot } from '../6-rollout/tokens';
import type { RolloutJob, RolloutReport, RolloutRunner } from '../6-rollout/runner';
import { buildStepTrees, type StepCalls } from '../7-tree/step-trees';
import type { ModelCallRecord, RecordSource } from '../contracts/records';
import { ClawGymError, ErrorCodes } from '../errors';
import { computeStepAdvantages } from '../8-advantage/step-advantages';
import { isTrainable } from '../7-tree/trainable';
import { Rng } from '../util/rng';

/** What one RL step needs: the run's services. */
export interface StepServices {
  kernel: Kernel;
  runner: Pick<RolloutRunner, 'run'>;
  engine: Pick<Engine, 'chatTemplate' | 'syncWeights'>;
  trainer: Trainer;
  policyLoss: PolicyLoss;
  tasks: readonly Task[];
  harnesses: readonly HarnessSlot[];
  /**
   * Where the rollouts' full records are read from, one at a time, while each tree is built (the
   * run's proxy, over its store). Without it, reports must carry their records' prompt ids.
   */
  records?: RecordSource;
}

/** How a step went: its rollouts and trees, and the trainer's metrics (none when nothing was trainable). */
export interface StepOutcome {
  reports: RolloutReport[];
  trees: RolloutTree[];
  /** Undefined when no rollout was trainable: the trainer was not asked to step. */
  train?: TrainMetrics;
  /** The advantages the trainer was given (undefined with `train`). */
  advantages?: AdvantageResult;
  /** Seconds the trainer waited for rollouts (the whole rollout phase in the synchronous loop). */
  rolloutSeconds: number;
  /** Seconds of the trainer's step (trees and advantages apart), when it stepped. */
  trainSeconds?: number;
  /** Asynchronous mode: rollouts that finished but were dropped as too stale (they cost, and were not trained). */
  dropped?: RolloutReport[];
  /** Asynchronous mode: the step's own metrics (staleness, drops, throughput) and the units it consumed. */
  async?: { values: Record<string, number>; units: number[] };
}

/**
 * The rollouts of a step: `tasksPerStep` tasks drawn from the step's seed, each through every
 * harness `groupSize` times. A restarted step (`attempt` > 1) gets fresh rollout ids, so the
 * killed attempt's records stay and none collide.
 */
export function stepJobs(s: Pick<StepServices, 'kernel' | 'tasks' | 'harnesses'>, step: number, attempt: number): RolloutJob[] {
  const { run } = s.kernel.config;
  const rng = new Rng(run.seed * 1_000_003 + step);
  const jobs: RolloutJob[] = [];
  for (let t = 0; t < run.tasksPerStep; t++) {
    const task = s.tasks[rng.int(0, s.tasks.length - 1)]!;
    for (const { harness, options } of s.harnesses) {
      for (let g = 0; g < run.groupSize; g++) jobs.push({ rolloutId: `s${step}a${attempt}-t${t}-${harness.name}-${g}`, step, task, harness, harnessOptions: options });
    }
  }
  return jobs;
}

/**
 * One RL step: the rollouts, their trees (built-in filters, then `onTreeBuilt`), advantages from
 * the selected algorithm, one trainer step with the selected policy loss, and the engine's new
 * weights. When no rollout is trainable (all infrastructure failures, or all dropped) the
 * trainer is not asked to step: an optimiser step on no gradient still moves AdamW's weights.
 * Resolves to undefined when `signal` stopped the rollouts.
 */
export async function runStep(s: StepServices, step: number, attempt: number, signal?: AbortSignal): Promise<StepOutcome | undefined> {
  const started = Date.now();
  const reports = await s.runner.run(stepJobs(s, step, attempt), signal);
  if (signal?.aborted) return undefined;
  const rolloutSeconds = (Date.now() - started) / 1000;
  return { reports, rolloutSeconds, ...await trainOn(s, reports) };
}

/**
 * A report's calls for its tree: streamed from the store when the step has one (the report holds
 * heads only), else the records the report itself carries (a runner that kept them in memory).
 */
function callsOf(source: RecordSource | undefined, r: RolloutReport): StepCalls {
  if (source) return { calls: r.records, stream: () => source.stream(r.sessionId) };
  const records = r.records.filter((c): c is ModelCallRecord => c.promptIds !== undefined);
  if (records.length !== r.records.length) {
    throw new ClawGymError(ErrorCodes.RECORDS_INVALID, `rollout ${r.sessionId}: its report holds call heads without prompt ids, and the step was given no record source to read them from`, { hint: 'pass the run\'s proxy (or its call store) as `records` in the step services' });
  }
  return { records };
}

/**
 * The trainer's half of a step, on rollouts already run: trees (built-in filters, then
 * `onTreeBuilt`), advantages, one trainer step, and the engine's new weights. The synchronous
 * loop gives it the step's own rollouts; the asynchronous one the freshest finished groups.
 */
export async function trainOn(s: StepServices, reports: RolloutReport[]): Promise<{ trees: RolloutTree[]; train?: TrainMetrics; advantages?: AdvantageResult; trainSeconds?: number }> {
  const trees = await buildStepTrees(s.kernel, reports.map((r) => ({
    ...callsOf(s.records, r),
    info: { rolloutId: r.sessionId, taskId: r.request.taskId, category: r.request.category, harness: r.request.harness, outcome: r.outcome, reward: Number.isNaN(r.reward) ? 0 : r.reward },
  })), s.engine.chatTemplate.stopIds[0]!);
  if (!trees.some(isTrainable)) return { trees };
  const advantages = await computeStepAdvantages(s.kernel, trees, s.trainer);
  const started = Date.now();
  const train = await s.trainer.step({ trees, advantages, loss: s.kernel.config.loss, policyLoss: s.policyLoss });
  const trainSeconds = (Date.now() - started) / 1000;
  // A trainer in another process publishes its weights; the engine loads them (or, sharing
  // the trainer's weights in process, has nothing to do).
  const published = await s.trainer.publishWeights?.();
  await s.engine.syncWeights?.(published);
  return { trees, train, advantages, trainSeconds };
}
