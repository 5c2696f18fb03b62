import { KernelTokens } from '../kernel/tokens';
import { ServiceTokens } from '../6-rollout/tokens';

/**
 * Every injection token of the run container: what the kernel registers (config, hooks,
 * registry, run id) and the run's services (call store, proxy, runner, sandboxes, engine,
 * trainer, harnesses, tasks, reporters). A plugin replaces a service with
 * `api.container.register(Tokens.CallStore, { useValue: myStore })` from `apply`.
 */
export const Tokens = Object.freeze({ ...KernelTokens, ...ServiceTokens });
