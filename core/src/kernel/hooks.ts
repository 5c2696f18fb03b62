import { AsyncSeriesHook, AsyncSeriesWaterfallHook } from 'tapable';
import type { HookMap, RolloutRequest, RolloutResult, RunInfo, RunSummary, StepInfo, StepResult } from '../contracts/hooks';
import type { ModelCallRecord } from '../contracts/records';
import type { AdvantageInput, AdvantageResult, RolloutTree } from '../contracts/tree';

/**
 * Named tap stages: tapable's `stage` is the one ordering mechanism (lower runs first).
 * Use them instead of magic numbers: `api.hooks.onTreeBuilt.tapPromise({ stage: HookStage.LATE }, fn)`.
 */
export const HookStage = Object.freeze({ EARLY: -100, NORMAL: 0, LATE: 100 });

/**
 * Creates the run's hook map ({@link HookMap}: what each hook is, receives and comes between),
 * frozen: no plugin adds an extension point of its own.
 */
export function createHooks(): HookMap {
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
