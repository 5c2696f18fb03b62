import type { AsyncSeriesHook, AsyncSeriesWaterfallHook } from 'tapable';
import type { HarnessFingerprint } from './harness';
import type { ModelCallRecord } from './records';
import type { AdvantageInput, AdvantageResult, RolloutOutcome, RolloutTree } from './tree';

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
  /** What the harness sent the model besides the task (its first main call), when it made one. */
  fingerprint?: HarnessFingerprint;
}

export interface RunInfo { runId: string; runDir: string }
export interface StepInfo { runId: string; step: number }
export interface StepResult { runId: string; step: number; metrics: Record<string, number> }
export interface RunSummary { runId: string; status: 'completed' | 'failed' | 'cancelled'; steps: number }

/**
 * The run's hook map: every extension point of ClawGym, in one place (the kernel makes it, frozen:
 * `createHooks`).
 *
 * | hook | kind | receives | previous → next |
 * |---|---|---|---|
 * | `runStart` | series | {@link RunInfo} | config loaded → first step |
 * | `stepStart` | series | {@link StepInfo} | previous `stepEnd` → rollouts |
 * | `beforeRollout` | **waterfall** | {@link RolloutRequest} → RolloutRequest | task sampled → sandbox created |
 * | `onModelCall` | series | {@link ModelCallRecord} | record stored → response ends |
 * | `afterRollout` | series | {@link RolloutResult} | verified, sandbox destroyed → tree built |
 * | `onTreeBuilt` | **waterfall** | {@link RolloutTree} → RolloutTree | tree built → advantages (core's built-in filters are its first tap) |
 * | `computeAdvantage` | **waterfall** | {@link AdvantageResult} → AdvantageResult (and the {@link AdvantageInput}) | the selected algorithm computed them → trainer |
 * | `stepEnd` | series | {@link StepResult} | trainer step → next `stepStart` |
 * | `runEnd` | series | {@link RunSummary} | last step (or cancel) → exit |
 *
 * Waterfalls transform a value (each tap returns the new one). Algorithms are not taps: the
 * registry dispatches to the one the config selects, and `computeAdvantage` lets plugins
 * reshape its result.
 */
export type HookMap = {
  readonly runStart: AsyncSeriesHook<[RunInfo]>;
  readonly stepStart: AsyncSeriesHook<[StepInfo]>;
  readonly beforeRollout: AsyncSeriesWaterfallHook<[RolloutRequest]>;
  readonly onModelCall: AsyncSeriesHook<[ModelCallRecord]>;
  readonly afterRollout: AsyncSeriesHook<[RolloutResult]>;
  readonly onTreeBuilt: AsyncSeriesWaterfallHook<[RolloutTree]>;
  readonly computeAdvantage: AsyncSeriesWaterfallHook<[AdvantageResult, AdvantageInput]>;
  readonly stepEnd: AsyncSeriesHook<[StepResult]>;
  readonly runEnd: AsyncSeriesHook<[RunSummary]>;
};
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

/** Options a plugin may give a tap. The tap's name is always the plugin's name. */
export interface TapOptions {
  /** Lower stages run first; see {@link HookStage}. */
  stage?: number;
  /** Run before the taps of these plugins. */
  before?: string | string[];
}

type Args<H> = H extends { call: (...args: infer A) => any } ? A : H extends { promise: (...args: infer A) => any } ? A : never;
type Ret<H> = H extends { promise: (...args: any[]) => Promise<infer R> } ? R : never;

/**
 * What a plugin sees of a hook: `tap` (sync) and `tapPromise` (async), with errors wrapped in
 * {@link HookError} naming plugin and hook, and async taps timed out. Plugins never call hooks.
 */
export interface PluginHook<H> {
  tap(options: TapOptions | undefined, fn: (...args: Args<H>) => Ret<H>): void;
  tapPromise(options: TapOptions | undefined, fn: (...args: Args<H>) => Promise<Ret<H>>): void;
}

export type PluginHooks = { readonly [K in HookName]: PluginHook<HookMap[K]> };
