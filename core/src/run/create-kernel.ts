import type { ResolvedConfig } from '../config/schema';
import { useBuiltins } from '../builtins';
import { usePluginRef } from '../kernel/create';
import { Kernel } from '../kernel/kernel';
import type { Logger } from '../contracts/plugin';

/**
 * Create a run's kernel: core's built-in plugins (the composition root's choice, not the
 * kernel's), then every plugin listed in the config, in order. A plugin may register a service
 * in the container from `apply`; `composeRun` keeps it instead of core's default.
 */
export async function createKernel(config: ResolvedConfig, options: { runId?: string; logger?: Logger } = {}): Promise<Kernel> {
  const kernel = new Kernel(config, options);
  await useBuiltins(kernel);
  for (const ref of config.plugins) await usePluginRef(kernel, ref);
  return kernel;
}
