import 'reflect-metadata';
import { join } from 'node:path';
import { instancePerContainerCachingFactory, Lifecycle, type DependencyContainer, type InjectionToken } from 'tsyringe';
import type { Engine } from '../contracts/engine';
import type { ModelCallRecord } from '../contracts/records';
import type { Reporter } from '../contracts/reporter';
import type { SandboxProvider } from '../contracts/sandbox';
import type { Task } from '../contracts/task';
import type { Trainer } from '../contracts/trainer';
import type { ResolvedConfig } from '../config/schema';
import { provider, slotOptions, trainerOptions, type SlotRef } from '../kernel/create';
import type { Kernel } from '../kernel/kernel';
import type { Logger } from '../contracts/plugin';
import { type HarnessSlot, type RunTasks } from '../6-rollout/tokens';
import { Tokens } from './tokens';
import { ServingProxy } from '../4-proxy/server';
import { metricsJsonlReporter } from '../report/reporters';
import { CallStore } from '../5-records/call-store';
import { RolloutRunner, type RunnerOptions } from '../6-rollout/runner';
import { createKernel } from './create-kernel';
import { assertWeightsRoute } from '../kernel/weights-route';

/**
 * What a run is composed for: `clawgym run` trains, `sft` trains on demonstrations, `eval` only
 * rolls out, `serve` only serves (the proxy and the engine; no harnesses or tasks are loaded).
 */
export type RunPurpose = 'run' | 'sft' | 'eval' | 'serve';

export interface ComposeOptions {
  config: ResolvedConfig;
  purpose: RunPurpose;
  /** The run id (proxy sessions, sandbox sweeps, records). */
  name: string;
  runDir: string;
  logger?: Logger;
  /** Engine slot instead of the config's; `false`: no engine (eval's oracle and null engines are made by the caller). */
  engine?: SlotRef | false;
  /** Harnesses and task suites instead of the config's (eval's `--harness`, `--suite`). */
  harnesses?: SlotRef[];
  suites?: SlotRef[];
  /** Tasks to load per split; a split left out is not loaded. Default: the purpose's. */
  taskLimits?: Partial<Record<'train' | 'test', number>>;
  /** Adjust the engine's and trainer's options (sft --fresh drops the checkpoint). */
  policyOptions?: (options: Record<string, unknown>) => Record<string, unknown>;
  /** The run's rollout runner events (a live display). */
  onRollout?: RunnerOptions['onProgress'];
}

/** The services of a composed run, each resolved from the run container. */
export interface RunServices {
  kernel: Kernel;
  container: DependencyContainer;
  engine?: Engine;
  trainer?: Trainer;
  sandboxes: SandboxProvider;
  harnesses: HarnessSlot[];
  evalHarnesses: HarnessSlot[];
  tasks: RunTasks;
  reporters: Reporter[];
  /**
   * A scope of its own for an evaluation (or demonstration play) in `runDir`: a child container
   * with that folder, whose call store (and proxy, runner) are the scope's own.
   */
  scope(runDir: string, runId: string): DependencyContainer;
  /** Release the run's services (the kernel's container). */
  dispose(): Promise<void>;
}

/** Register `provider` under `token` unless a plugin registered that service itself. */
function byDefault<T>(container: DependencyContainer, token: InjectionToken<T>, register: () => void): void {
  if (!container.isRegistered(token)) register();
}

/** Resolve a service from the container, or make it (async) and register it as the default first. */
async function service<T>(container: DependencyContainer, token: InjectionToken<T>, make: () => Promise<T>): Promise<T> {
  if (!container.isRegistered(token)) container.register(token, { useValue: await make() });
  return container.resolve(token);
}

const DEFAULT_LIMITS: Record<RunPurpose, Partial<Record<'train' | 'test', number>>> = {
  run: { train: 1000 },
  sft: { train: 64 },
  eval: {},
  serve: {},
};

/**
 * The one composition of a run, for `run`, `sft` and `eval`: the kernel (core's built-ins, then
 * the config's plugins), then every service of the run registered in the kernel's child
 * container under its token — unless a plugin registered its own from `apply`, which wins —
 * and resolved from it. Engines, trainers, sandboxes, harnesses and task suites come from the
 * registry by the config's slots; reporters are the metrics file first, then the config's.
 */
export async function composeRun(o: ComposeOptions): Promise<RunServices> {
  const { config } = o;
  const kernel = await createKernel(config, { runId: o.name, logger: o.logger });
  const c = kernel.container;
  const ctx = { runDir: o.runDir, seed: config.run.seed, rootDir: config.rootDir };
  const policy = o.policyOptions ?? ((x) => x);

  c.register(Tokens.RunDir, { useValue: o.runDir });
  c.register(Tokens.CallsDir, { useValue: join(o.runDir, 'calls') });
  c.register(Tokens.ProxySocket, { useValue: join(o.runDir, 'proxy.sock') });
  // One store per scope (the run, each evaluation): its folder is the scope's CallsDir.
  byDefault(c, Tokens.CallStore, () => c.register(Tokens.CallStore, { useClass: CallStore }, { lifecycle: Lifecycle.ContainerScoped }));

  const engineSlot = o.engine === undefined ? config.engine : o.engine;
  // A trainer whose published weights the engine cannot load stops here, before anything starts.
  if (engineSlot !== false && (o.purpose === 'run' || o.purpose === 'sft')) await assertWeightsRoute(kernel, config, engineSlot);
  const engine = engineSlot === false ? undefined
    : await service(c, Tokens.Engine, async () => (await provider(kernel, 'engine', engineSlot)).create(policy(slotOptions(engineSlot)), ctx));
  const trainer = o.purpose === 'eval' || o.purpose === 'serve' ? undefined
    : await service(c, Tokens.Trainer, async () => (await provider(kernel, 'trainer', config.trainer)).create(policy(trainerOptions(config)), ctx));
  const sandboxes = await service(c, Tokens.Sandboxes, () => provider(kernel, 'sandbox', config.sandbox));
  const harnessesOf = (slots: readonly SlotRef[]) => Promise.all(slots.map(async (slot) => ({ harness: await provider(kernel, 'harness', slot), options: slotOptions(slot) })));
  const harnesses = await service(c, Tokens.Harnesses, () => harnessesOf(o.purpose === 'serve' ? [] : o.harnesses ?? config.harnesses));
  const evalHarnesses = await service(c, Tokens.EvalHarnesses, async () => (config.run.evalHarnesses && o.purpose === 'run' ? harnessesOf(config.run.evalHarnesses) : harnesses));
  const limits = o.taskLimits ?? { ...DEFAULT_LIMITS[o.purpose], ...(o.purpose === 'run' ? { test: config.run.evalTasks } : {}) };
  // Which suite (and plugin) each task came from, so a verifier's bug names them.
  const suiteOfTask = new WeakMap<Task, string>();
  const suitesLoaded: string[] = [];
  const tasks = await service(c, Tokens.Tasks, async () => {
    const out: RunTasks = { train: [], test: [] };
    for (const slot of o.purpose === 'serve' ? [] : o.suites ?? config.tasks) {
      const suite = await provider(kernel, 'taskSuite', slot);
      const origin = kernel.registry.entries('taskSuite').find((e) => e.name === suite.name)?.origin;
      const pkg = origin && origin.packageName !== '(config)' ? `, ${origin.packageName}${origin.version ? `@${origin.version}` : ''}` : '';
      const named = `task suite "${suite.name}"${origin ? ` (plugin "${origin.plugin}"${pkg})` : ''}`;
      suitesLoaded.push(named);
      for (const split of ['train', 'test'] as const) {
        const limit = limits[split];
        if (limit === undefined) continue;
        const loaded = await suite.tasks(split, { seed: config.run.seed, limit, options: slotOptions(slot) }) as Task[];
        for (const t of loaded) suiteOfTask.set(t, named);
        out[split].push(...loaded);
      }
    }
    return out;
  });
  const suiteOf = (t: Task) => suiteOfTask.get(t) ?? (suitesLoaded.length === 1 ? suitesLoaded[0] : undefined);
  const reporters = await service(c, Tokens.Reporters, async () => [
    metricsJsonlReporter,
    ...await Promise.all(config.reporters.map((slot) => provider(kernel, 'reporter', slot))),
  ]);

  // The proxy and runner of a scope, made when first resolved in it (an evaluation's scope gets its own).
  c.register(Tokens.ProxySettings, { useValue: {} });
  byDefault(c, Tokens.Proxy, () => c.register(Tokens.Proxy, {
    useFactory: instancePerContainerCachingFactory((s) => new ServingProxy({
      engine: s.resolve(Tokens.Engine), store: s.resolve(Tokens.CallStore), runId: s.resolve(Tokens.RunId),
      host: config.proxy.host, port: config.proxy.port, maxBodyBytes: config.proxy.maxBodyBytes,
      headersTimeoutMs: config.proxy.headersTimeoutMs, bodyTimeoutMs: config.proxy.bodyTimeoutMs, ...s.resolve(Tokens.ProxySettings),
      onRecord: async (r) => { await kernel.hooks.onModelCall.promise(r); },
    })),
  }));
  byDefault(c, Tokens.Runner, () => c.register(Tokens.Runner, {
    useFactory: instancePerContainerCachingFactory((s) => new RolloutRunner({
      runId: s.resolve(Tokens.RunId), project: config.rootDir, proxy: s.resolve(Tokens.Proxy), socketPath: s.resolve(Tokens.ProxySocket),
      sandboxes: s.resolve(Tokens.Sandboxes), kernel, concurrency: config.run.concurrency,
      timeoutMs: config.run.rolloutTimeoutMs, startupTimeoutMs: config.run.startupTimeoutMs, infraRetries: config.run.infraRetries,
      // The run's live display follows the run's own rollouts; a scope's caller listens to its own.
      onProgress: s === c ? o.onRollout : undefined,
      suiteOf,
    })),
  }));

  return {
    kernel, container: c, engine, trainer, sandboxes, harnesses, evalHarnesses, tasks, reporters,
    scope(runDir, runId) {
      const scope = c.createChildContainer();
      scope.register(Tokens.RunDir, { useValue: runDir });
      scope.register(Tokens.RunId, { useValue: runId });
      scope.register(Tokens.CallsDir, { useValue: join(runDir, 'calls') });
      scope.register(Tokens.ProxySocket, { useValue: join(runDir, 'proxy.sock') });
      // A fixed port in the config stays the run's own proxy's.
      scope.register(Tokens.ProxySettings, { useValue: { port: 0 } });
      return scope;
    },
    // Providers that keep things between sandboxes (Docker's warm pool) release them first.
    dispose: async () => {
      await sandboxes.close?.().catch(() => undefined);
      // A trainer service keeps a model until told otherwise; a one-model server then takes no next run.
      await trainer?.close?.().catch((e: unknown) => o.logger?.warn?.(`the trainer did not close cleanly: ${e instanceof Error ? e.message : String(e)}`));
      await kernel.dispose();
    },
  };
}
