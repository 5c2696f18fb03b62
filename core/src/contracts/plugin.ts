import type { DependencyContainer } from 'tsyringe';
import type { Algorithm } from './algorithm';
import type { EngineProvider } from './engine';
import type { Harness } from './harness';
import type { ComputeKernels } from './kernels';
import type { PolicyLoss } from './policy-loss';
import type { Reporter } from './reporter';
import type { SandboxProvider } from './sandbox';
import type { TaskSuite } from './task';
import type { TrainerProvider } from './trainer';
import type { PluginHooks } from './hooks';

/** What each kind of plugin provides, by kind. */
export interface ProvidedKinds {
  harness: Harness;
  taskSuite: TaskSuite;
  algorithm: Algorithm;
  sandbox: SandboxProvider;
  engine: EngineProvider;
  trainer: TrainerProvider;
  kernels: ComputeKernels;
  reporter: Reporter;
  policyLoss: PolicyLoss;
}
export type PluginKind = keyof ProvidedKinds;

/** Kinds in a fixed order (used for name expansion and listings). */
export const PLUGIN_KINDS: readonly PluginKind[] = [
  'harness', 'taskSuite', 'algorithm', 'sandbox', 'engine', 'trainer', 'kernels', 'reporter', 'policyLoss',
];

/** Package-name prefix of each kind: `@clawgym/<prefix>-<name>`. */
export const KIND_PREFIX: Readonly<Record<PluginKind, string>> = {
  harness: 'harness',
  taskSuite: 'task',
  algorithm: 'algo',
  sandbox: 'sandbox',
  engine: 'engine',
  trainer: 'trainer',
  kernels: 'kernels',
  reporter: 'reporter',
  policyLoss: 'loss',
};

/** Registration functions a plugin calls from `apply` to provide things. */
export type Provide = { [K in PluginKind]: (value: ProvidedKinds[K]) => void };

/** Minimal logger handed to plugins. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

/** What `apply` receives: the run's hooks (scoped to the plugin), registration and services. */
export interface PluginApi {
  /** Hooks, tapped in this plugin's name; errors are wrapped with it. */
  readonly hooks: PluginHooks;
  readonly provide: Provide;
  /** The run's DI container, for plugins that need core services. */
  readonly container: DependencyContainer;
  readonly log: Logger;
}

/**
 * A ClawGym plugin: a name and an `apply` that taps hooks and provides things.
 * Write it as a factory (`export default function myPlugin(options) { return {...} }`) or
 * with {@link definePlugin}, which validates options against a schema.
 */
export interface ClawGymPlugin {
  /** Unique name, conventionally `clawgym:<kind>-<name>` for built-ins. */
  readonly name: string;
  /** Semver range of `@clawgym/core` this plugin supports, e.g. `^0.1.0`. Checked at load. */
  readonly core?: string;
  apply(api: PluginApi): void | Promise<void>;
}

/** A function that makes a plugin from its options. */
export type PluginFactory<O = Record<string, unknown>> = (options?: O) => ClawGymPlugin;

/** True when `value` looks like a plugin object. */
export function isPlugin(value: unknown): value is ClawGymPlugin {
  return typeof value === 'object' && value !== null &&
    typeof (value as ClawGymPlugin).name === 'string' &&
    typeof (value as ClawGymPlugin).apply === 'function';
}
