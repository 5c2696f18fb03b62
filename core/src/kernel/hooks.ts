import { AsyncSeriesHook, AsyncSeriesWaterfallHook } from 'tapable';
import type { ModelCallRecord } from '../contracts/records';
import type { AdvantageInput, AdvantageResult, RolloutOutcome, RolloutTree } from '../contracts/tree';

/** A rollout about to start; `beforeRollout` taps may change it (env, tags, harness options). */
export interface RolloutRequest {
  runId: string;
  rolloutId: string;
  step: number;
  taskId: string;
  category: string;
  harness: string;
  instruction: string;
  /** Extra environment for the harness process. */
  env: Record<string, string>;
  /** Labels for the rollout: they travel with it to `afterRollout` taps and into `eval.json`. */
  tags: string[];
  harnessOptions: Record<string, unknown>;
}

/** A finished rollout, before its tree is built. */
export interface RolloutResult {
  request: RolloutRequest;
  outcome: RolloutOutcome;
  reward: number;
  details: string;
  calls: number;
  durationMs: number;
}

export interface RunInfo { runId: string; runDir: string }
export interface StepInfo { runId: string; step: number }
export interface StepResult { runId: string; step: number; metrics: Record<string, number> }
export interface RunSummary { runId: string; status: 'completed' | 'failed' | 'cancelled'; steps: number }

/**
 * Named tap stages: tapable's `stage` is the one ordering mechanism (lower runs first).
 * Use them instead of magic numbers: `api.hooks.onTreeBuilt.tapPromise({ stage: HookStage.LATE }, fn)`.
 */
export const HookStage = Object.freeze({ EARLY: -100, NORMAL: 0, LATE: 100 });

/**
 * Creates the run's hook map: every extension point of ClawGym, in one place.
 *
 * | hook | kind | receives | previous → next |
 * |---|---|---|---|
 * | `runStart` | series | {@link RunInfo} | config loaded → first step |
 * | `stepStart` | series | {@link StepInfo} | previous `stepEnd` → rollouts |
 * | `beforeRollout` | **waterfall** | {@link RolloutRequest} → RolloutRequest | task sampled → sandbox created |
 * | `onModelCall` | series | {@link ModelCallRecord} | record stored → response ends |
 * | `afterRollout` | series | {@link RolloutResult} | verified, sandbox destroyed → tree built |
 * | `onTreeBuilt` | **waterfall** | {@link RolloutTree} → RolloutTree | built-in filters → advantages |
 * | `computeAdvantage` | **waterfall** | {@link AdvantageResult} → AdvantageResult (and the {@link AdvantageInput}) | the selected algorithm computed them → trainer |
 * | `stepEnd` | series | {@link StepResult} | trainer step → next `stepStart` |
 * | `runEnd` | series | {@link RunSummary} | last step (or cancel) → exit |
 *
 * Waterfalls transform a value (each tap returns the new one). Algorithms are not taps: the
 * registry dispatches to the one the config selects, and `computeAdvantage` lets plugins
 * reshape its result.
 */
export function createHooks() {
  return Object.freeze({
    runStart: new AsyncSeriesHook<[RunInfo]>(['run']),
    stepStart: new AsyncSeriesHook<[StepInfo]>(['step']),
    beforeRollout: new AsyncSeriesWaterfallHook<[RolloutRequest]>(['request']),
    onModelCall: new AsyncSeriesHook<[ModelCallRecord]>(['record']),
    afterRollout: new AsyncSeriesHook<[RolloutResult]>(['result']),
    onTreeBuilt: new AsyncSeriesWaterfallHook<[RolloutTree]>(['tree']),
    computeAdvantage: new AsyncSeriesWaterfallHook<[AdvantageResult, AdvantageInput]>(['result', 'input']),
    stepEnd: new AsyncSeriesHook<[StepResult]>(['result']),
    runEnd: new AsyncSeriesHook<[RunSummary]>(['summary']),
  });
}

/** The typed hook map of a run. */
export type HookMap = ReturnType<typeof createHooks>;
export type HookName = keyof HookMap;

/** Every hook name, at runtime (for docs and the config's `hooks.perHookTimeoutMs` keys). */
export const HOOK_NAMES = [
  'runStart',
  'stepStart',
  'beforeRollout',
  'onModelCall',
  'afterRollout',
  'onTreeBuilt',
  'computeAdvantage',
  'stepEnd',
  'runEnd',
] as const;

// Compile-time proof that HOOK_NAMES lists exactly the keys of HookMap: the build fails otherwise.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const hookNamesMatchMap: Equals<(typeof HOOK_NAMES)[number], HookName> = true;
void hookNamesMatchMap;
