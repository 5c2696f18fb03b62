import type { InjectionToken } from 'tsyringe';
import type { ResolvedConfig } from '../config/schema';
import type { HookMap } from '../contracts/hooks';
import type { Registry } from './registry';

/**
 * Injection tokens of what the kernel itself puts in the run container. Services take
 * dependencies with `@inject(TOKEN)`; nothing relies on emitted decorator metadata. The run's
 * services have their tokens beside the runner (`rollout/tokens.ts`); `Tokens` from
 * `@clawgym/core` holds both.
 */
export const KernelTokens = {
  Config: Symbol.for('clawgym.Config') as InjectionToken<ResolvedConfig>,
  Hooks: Symbol.for('clawgym.Hooks') as InjectionToken<HookMap>,
  Registry: Symbol.for('clawgym.Registry') as InjectionToken<Registry>,
  RunId: Symbol.for('clawgym.RunId') as InjectionToken<string>,
} as const;
