import type { InjectionToken } from 'tsyringe';
import type { Engine } from '../contracts/engine';
import type { Harness } from '../contracts/harness';
import type { RecordStore } from '../contracts/records';
import type { Reporter } from '../contracts/reporter';
import type { SandboxProvider } from '../contracts/sandbox';
import type { Task } from '../contracts/task';
import type { Trainer } from '../contracts/trainer';
import type { ProxyOptions, ServingProxy } from '../4-proxy/server';
import type { RolloutRunner } from './runner';

/** A harness of the run with the options its config slot gives it. */
export interface HarnessSlot { harness: Harness; options: Record<string, unknown> }

/** The tasks a run draws from: the train split and the held-out test split. */
export interface RunTasks { train: Task[]; test: Task[] }

/**
 * Injection tokens of a run's services in the run container. The composition root
 * (`run/compose.ts`) registers a default for each service a plugin has not registered itself,
 * so a plugin replaces a service by registering it from `apply` (`api.container.register`).
 */
export const ServiceTokens = {
  /** The run's directory (`<run.outDir>/<name>`, or an evaluation's own folder in its scope). */
  RunDir: Symbol.for('clawgym.RunDir') as InjectionToken<string>,
  /** Where the scope's call records go (`<RunDir>/calls`). */
  CallsDir: Symbol.for('clawgym.CallsDir') as InjectionToken<string>,
  /** The store of call records, one per scope (the run, each evaluation). */
  CallStore: Symbol.for('clawgym.CallStore') as InjectionToken<RecordStore>,
  /** The serving proxy in front of the engine, one per scope. */
  Proxy: Symbol.for('clawgym.Proxy') as InjectionToken<ServingProxy>,
  /** The proxy's Unix socket, bound into each sandbox. */
  ProxySocket: Symbol.for('clawgym.ProxySocket') as InjectionToken<string>,
  /**
   * The scope's proxy settings on top of the config's: an evaluation's scope listens on a port
   * of its own (`port: 0`), an oracle's raises `maxTokens`, `clawgym serve` sets its flags'.
   */
  ProxySettings: Symbol.for('clawgym.ProxySettings') as InjectionToken<Partial<Pick<ProxyOptions, 'host' | 'port' | 'maxTokens' | 'onNote'>>>,
  /** The rollout runner of the scope. */
  Runner: Symbol.for('clawgym.Runner') as InjectionToken<RolloutRunner>,
  Sandboxes: Symbol.for('clawgym.Sandboxes') as InjectionToken<SandboxProvider>,
  Engine: Symbol.for('clawgym.Engine') as InjectionToken<Engine>,
  Trainer: Symbol.for('clawgym.Trainer') as InjectionToken<Trainer>,
  Harnesses: Symbol.for('clawgym.Harnesses') as InjectionToken<HarnessSlot[]>,
  EvalHarnesses: Symbol.for('clawgym.EvalHarnesses') as InjectionToken<HarnessSlot[]>,
  Tasks: Symbol.for('clawgym.Tasks') as InjectionToken<RunTasks>,
  /** Every reporter of the run, built-in (the metrics file first) and configured. */
  Reporters: Symbol.for('clawgym.Reporters') as InjectionToken<Reporter[]>,
} as const;
