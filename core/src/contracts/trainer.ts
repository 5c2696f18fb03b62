import type { DatumTrainer } from './datum';
import type { PublishedWeights } from './weights';
import type { ProviderContext } from './engine';
import type { PolicyLoss } from './policy-loss';
import type { AdvantageResult, RolloutTree } from './tree';

/** Settings of the policy loss shared by all algorithms. */
export interface PolicyLossConfig {
  /** Lower and upper clip of the ratio against the policy at the start of the step. */
  clipLow: number;
  clipHigh: number;
  /** Truncation of the token-level importance weight `min(π_trainer / π_rollout, C)`. */
  tisCap: number;
  /** Weight of the value loss `(V − R)²` (PPO only). */
  valueCoef?: number;
  /**
   * Optimiser steps on this batch (default 1). Every one clips its ratio against the policy at
   * the start of the first, whose logprobs also give the importance weight.
   */
  epochs?: number;
}

/** One optimisation step's input: filtered trees and their advantages. */
export interface TrainerBatch {
  trees: readonly RolloutTree[];
  advantages: AdvantageResult;
  loss: PolicyLossConfig;
  /** The policy loss the config selects (`policyLoss` slot), for trainers that compute it themselves. */
  policyLoss: PolicyLoss;
}

/** What a trainer reports after a step. */
export interface TrainMetrics {
  loss: number;
  /** Mean |log π_trainer − log π_rollout| over trained tokens: the engine/trainer mismatch. */
  mismatchAbsLogp: number;
  /** KL estimate between rollout and trainer policies. */
  mismatchKl: number;
  clipFraction: number;
  tokens: number;
  [key: string]: number;
}

/** Trains the policy; registered by trainer plugins (embedded, remote, ...). */
/** Per-step settings of a supervised step (the sft loop owns its schedule). */
export interface SupervisedStepOptions {
  /** Learning rate of this step instead of the trainer's configured one (warm-up still applies). */
  lr?: number;
}

export interface Trainer {
  readonly name: string;
  step(batch: TrainerBatch): Promise<TrainMetrics>;
  policyVersion(): number;
  /** Value estimates V(s_t) per generated token, for trainers with a value head (PPO). */
  values?(trees: readonly RolloutTree[]): Promise<Map<string, Map<number, Float32Array>>>;
  /** One supervised step (cross-entropy on every kept generated token, shared prefixes once): the cold start. */
  supervisedStep?(trees: readonly RolloutTree[], options?: SupervisedStepOptions): Promise<{ loss: number; tokens: number }>;
  /**
   * Publish the current weights for engines in other processes (after `step`); trainers whose
   * engine shares their weights in process may leave it out (or resolve to undefined).
   */
  publishWeights?(): Promise<PublishedWeights | undefined>;
  /** The Tinker operations on datums, for trainers that serve them (`clawgym trainer serve`). */
  readonly datums?: DatumTrainer;
  save(dir: string): Promise<void>;
  /**
   * Restore a checkpoint. A run's own checkpoint restores everything (weights, optimiser, step
   * counter); `weightsOnly` loads a model to start from (a shipped cold start) with a fresh
   * optimiser and the step counter at 0.
   */
  load(dir: string, options?: { weightsOnly?: boolean }): Promise<void>;
  /** Release what the trainer holds elsewhere (a model on a trainer service), when the run ends. */
  close?(): Promise<void>;
}

/** Why a trainer's published weights cannot reach the configured engine, and how to fix it. */
export interface WeightsRouteProblem {
  message: string;
  hint: string;
}

export interface TrainerProvider {
  readonly name: string;
  create(options: Record<string, unknown>, ctx: ProviderContext): Promise<Trainer>;
  /**
   * Whether the weights this trainer will publish (with these options) can be loaded by the
   * configured engine: asked before anything starts (`clawgym doctor`, and a run before it creates
   * its engine and trainer), so a combination that cannot work stops at once, not at the first
   * weight sync. Undefined when it can (or the trainer cannot tell).
   */
  checkEngine?(options: Record<string, unknown>, engine: { name: string; options: Record<string, unknown> }): WeightsRouteProblem | undefined;
}
