import { resolveConfig } from '../config/load';
import type { ClawGymConfig } from '../config/schema';
import type { ClawGymPlugin, Logger } from '../contracts/plugin';
import { Kernel } from '../kernel/kernel';
import { useBuiltins } from '../builtins';

export interface TestKernelOptions {
  /** Plugins to apply, in order. */
  plugins?: ClawGymPlugin[];
  /** Config overrides (validated like a real config). */
  config?: ClawGymConfig;
  /** Folder plugin names resolve from (default: the current folder). */
  rootDir?: string;
  /** Where plugin log lines go (default: collected in `logs`). */
  logger?: Logger;
}

/**
 * A kernel for tests: config validated and defaulted as in a real run, core's built-ins and the
 * given plugins applied.
 * Log lines are collected in `kernel.logs` instead of printed.
 */
export async function createTestKernel(options: TestKernelOptions = {}): Promise<Kernel & { logs: string[] }> {
  const logs: string[] = [];
  const config = resolveConfig(options.config ?? {}, { rootDir: options.rootDir ?? process.cwd() });
  const logger = options.logger ?? { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(`warning: ${m}`) };
  const kernel = Object.assign(new Kernel(config, { runId: 'test', logger }), { logs });
  // What every real kernel has: core's engines, local sandbox and cpu kernels.
  await useBuiltins(kernel);
  for (const plugin of options.plugins ?? []) await kernel.use(plugin);
  return kernel;
}
