import { z } from 'zod';
import { HOOK_NAMES } from '../contracts/hooks';
import { isPlugin, type ClawGymPlugin } from '../contracts/plugin';

const pluginObject = z.custom<ClawGymPlugin>(isPlugin, {
  message: 'expected a plugin object ({ name, apply }), a package name, or [name, options]',
});
const options = z.record(z.string(), z.unknown());

/** A plugin: an imported object, a name (`grpo`, `@acme/x`, `./local-plugin`), or `[name, options]`. */
export const PluginRefSchema = z.union([pluginObject, z.string().min(1), z.tuple([z.string().min(1), options])]);

/**
 * Which provider fills a slot: a registered name (`"grpo"`) or `{ use, options }`.
 * A name that no loaded plugin provides is resolved as a package of that slot's kind
 * (`algorithm: "grpo"` → `@clawgym/algo-grpo`).
 */
export const SlotSchema = z.union([
  z.string().min(1),
  z.strictObject({ use: z.string().min(1), options: options.default({}) }),
]);

const positiveInt = z.number().int().positive();

/** The schema of `clawgym.config.ts`. Unknown keys are errors (with a suggestion), never ignored. */
export const ConfigSchema = z.strictObject({
  /** Run name: the run directory is `<run.outDir>/<name>`. */
  name: z.string().regex(/^[\w.-]+$/, 'use letters, digits, ".", "-" and "_" only').default('default'),
  plugins: z.array(PluginRefSchema).default([]),
  harnesses: z.array(SlotSchema).min(1).default(['agentloop']),
  tasks: z.array(SlotSchema).min(1).default(['builtin']),
  algorithm: SlotSchema.default('grpo'),
  engine: SlotSchema.default('embedded'),
  trainer: SlotSchema.default('embedded'),
  sandbox: SlotSchema.default('local'),
  /**
   * Reporters that receive every metrics event and render at the end of the run, after the
   * built-in metrics file (`metrics.jsonl`, always written: resume reads it).
   */
  reporters: z.array(SlotSchema).default(['tensorboard', 'html']),
  /** The policy loss the trainer minimises (core's clipped ratio with truncated importance weight). */
  policyLoss: SlotSchema.default('clipped-tis'),
  run: z.strictObject({
    steps: positiveInt.default(20),
    tasksPerStep: positiveInt.default(8),
    /** Rollouts per Task×Harness pair in a step (the GRPO group). */
    groupSize: positiveInt.default(8),
    concurrency: positiveInt.default(4),
    seed: z.number().int().default(0),
    /** Evaluate on the test split every N steps (0: only at start and end). */
    evalEvery: z.number().int().min(0).default(5),
    evalTasks: positiveInt.default(100),
    /**
     * Harnesses the held-out evaluation runs through (default: the ones trained through). A
     * policy trained through one harness can be measured through another: how it transfers.
     */
    evalHarnesses: z.array(SlotSchema).min(1).optional(),
    outDir: z.string().default('runs'),
    rolloutTimeoutMs: positiveInt.default(120_000),
    /**
     * A harness that asks for no completion this long after it started is stopped, and its
     * rollout is an infrastructure failure (class `harness-start`), never a reward-0 timeout.
     * Generous by default: a CLI may install or index before its first call.
     */
    startupTimeoutMs: positiveInt.default(300_000),
    /** Retries of a rollout after an infrastructure failure (never after a harness failure). */
    infraRetries: z.number().int().min(0).default(2),
    /**
     * Stop the run (non-zero exit, the first failure's message) after this many steps in a row
     * in which every rollout failed for infrastructure reasons (0: never stop).
     */
    maxInfraSteps: z.number().int().min(0).default(3),
    /**
     * Asynchronous rollouts: they keep running while the trainer steps, and a step trains on
     * finished groups as `policy` picks them; `maxStaleness` bounds how many policy versions a
     * trained rollout lags (`fair`: no new group starts while the oldest running one lags more;
     * `freshest`: a rollout that lags more is dropped, counted, never trained); the truncated
     * importance weight corrects the lag, token by token against the logprobs of the version
     * that generated each token. A weight update may land between two calls of one rollout
     * (partial rollouts): every call records the version that served it, and `maxVersionSpan`
     * bounds how many versions one rollout's calls may span (newest − oldest; a rollout spanning
     * more is dropped, counted as `async/span_dropped`). Unset: `maxStaleness`, which already
     * bounds it. Unset `async`: the synchronous loop.
     */
    async: z.strictObject({
      maxStaleness: z.number().int().min(0).default(2),
      maxVersionSpan: z.number().int().min(0).optional(),
      /**
       * Which finished groups a step trains. `fair` (default): the groups that started first, none
       * dropped for staleness or span; no new group starts while the oldest running one is more
       * than `maxStaleness` versions behind, which bounds staleness without favouring short tasks
       * and trains every rollout it generates. `freshest`: the freshest, stale rollouts dropped —
       * long rollouts start under older weights and are dropped more often, so training leans to
       * short tasks, and the dropped rollouts' work is lost (a third of it in `bench:async`).
       */
      policy: z.enum(['freshest', 'fair']).default('fair'),
    }).optional(),
  }).prefault({}),
  loss: z.strictObject({
    clipLow: z.number().positive().default(0.2),
    clipHigh: z.number().positive().default(0.28),
    tisCap: z.number().positive().default(2),
    valueCoef: z.number().min(0).default(0.5),
    /**
     * Optimiser steps on each step's batch (PPO's epochs), ratios clipped against the policy
     * that sampled it. More learning per rollout where rollouts are what costs.
     */
    epochs: z.number().int().min(1).max(16).default(1),
  }).prefault({}),
  tree: z.strictObject({
    maxBranches: positiveInt.default(16),
    dropDeadLeaves: z.boolean().default(true),
    excludeAuxiliary: z.boolean().default(true),
  }).prefault({}),
  proxy: z.strictObject({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(0),
    maxBodyBytes: positiveInt.default(32 * 1024 * 1024),
    /** A client that has not sent a request's headers in this long is answered 408 and closed. */
    headersTimeoutMs: positiveInt.default(10_000),
    /** A client that has not sent a request's body this long after its headers is answered 408 and closed. */
    bodyTimeoutMs: positiveInt.default(10_000),
  }).prefault({}),
  /**
   * What the run's resources cost, to turn its cost figures (`cost/` in metrics.jsonl) into money:
   * tokens per million, sandboxes per hour of sandbox wall time, the engine's and the trainer's
   * GPUs per hour they are held (the step's wall time, times how many). Unset: figures only.
   */
  prices: z.strictObject({
    /** The unit the money is shown in. */
    currency: z.string().min(1).default('USD'),
    /** Per million prompt tokens the engine prefilled (new, not reused from the prefix). */
    promptTokens: z.number().min(0).default(0),
    /** Per million prompt tokens reused from the rollout's prefix (a provider's cached-input price). */
    reusedTokens: z.number().min(0).default(0),
    /** Per million generated tokens. */
    generatedTokens: z.number().min(0).default(0),
    /** Per million tokens the trainer stepped on (hosted trainers bill these). */
    trainedTokens: z.number().min(0).default(0),
    /** Per hour of sandbox wall time (each rollout's sandbox, from creation to removal). */
    sandboxHour: z.number().min(0).default(0),
    /** Per GPU-hour of the engine, and how many GPUs it holds. */
    engineGpuHour: z.number().min(0).default(0),
    engineGpus: z.number().min(0).default(1),
    /** Per GPU-hour of the trainer, and how many GPUs it holds (0 where it shares the engine's). */
    trainerGpuHour: z.number().min(0).default(0),
    trainerGpus: z.number().min(0).default(1),
  }).optional(),
  hooks: z.strictObject({
    /** How long an async tap may stay pending before it fails the hook. */
    timeoutMs: positiveInt.default(60_000),
    perHookTimeoutMs: z.partialRecord(z.enum(HOOK_NAMES), positiveInt).optional(),
  }).prefault({}),
});

/** What a user writes (every key optional). */
export type ClawGymConfig = z.input<typeof ConfigSchema>;
/** The validated, defaulted and frozen config a run uses. */
export type ResolvedConfig = Readonly<z.output<typeof ConfigSchema>> & {
  /** Folder of the config file: plugin names resolve from here. */
  readonly rootDir: string;
  /** The config file, or undefined for a config given in code. */
  readonly configFile?: string;
};
