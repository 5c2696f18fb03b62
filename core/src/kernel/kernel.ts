import 'reflect-metadata';
import semver from 'semver';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import type { ResolvedConfig } from '../config/schema';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf } from '../errors';
import { CORE_VERSION } from '../version';
import type { HookMap } from '../contracts/hooks';
import { createHooks } from './hooks';
import { PLUGIN_KINDS, type ClawGymPlugin, type Logger, type PluginApi, type Provide } from '../contracts/plugin';
import { Registry, type PluginOrigin } from './registry';
import { scopeHooks } from './scoped-hooks';
import { KernelTokens } from './tokens';

const consoleLogger: Logger = {
  info: (m) => console.log(m),
  warn: (m) => console.warn(`warning: ${m}`),
};

/** Refuse a plugin whose declared core range excludes the running core. */
export function assertCompatible(plugin: { name: string; core?: string }, origin?: PluginOrigin, packageRange?: string): void {
  for (const range of [plugin.core, packageRange]) {
    if (!range) continue;
    if (!semver.validRange(range) || !semver.satisfies(CORE_VERSION, range, { includePrerelease: true })) {
      const from = origin ? ` (package ${origin.packageName}${origin.version ? `@${origin.version}` : ''})` : '';
      throw new ClawGymError(
        ErrorCodes.PLUGIN_INCOMPATIBLE,
        `plugin "${plugin.name}"${from} was built for @clawgym/core ${range}, but this is @clawgym/core ${CORE_VERSION}`,
        { hint: `Install a version of the plugin made for @clawgym/core ${semver.major(CORE_VERSION)}.x, or a matching @clawgym/core.` },
      );
    }
  }
}

/**
 * The kernel of one run: a tsyringe child container owning the run's services, the frozen
 * hook map, and the registry of what plugins provide. Small on purpose: the pipeline lives in
 * services resolved from the container, the variety lives in plugins.
 */
export class Kernel {
  readonly container: DependencyContainer;
  readonly hooks: HookMap;
  readonly registry: Registry;

  constructor(
    readonly config: ResolvedConfig,
    options: { runId?: string; logger?: Logger; parent?: DependencyContainer } = {},
  ) {
    this.container = (options.parent ?? rootContainer).createChildContainer();
    this.hooks = createHooks();
    this.registry = new Registry();
    this.logger = options.logger ?? consoleLogger;
    this.container.register(KernelTokens.Config, { useValue: config });
    this.container.register(KernelTokens.Hooks, { useValue: this.hooks });
    this.container.register(KernelTokens.Registry, { useValue: this.registry });
    this.container.register(KernelTokens.RunId, { useValue: options.runId ?? 'run' });
  }

  private readonly logger: Logger;

  /** Apply one plugin: check compatibility, record it, give it its scoped API. */
  async use(plugin: ClawGymPlugin, origin: Partial<PluginOrigin> & { packageRange?: string } = {}): Promise<void> {
    const full: PluginOrigin = { plugin: plugin.name, packageName: origin.packageName ?? '(config)', version: origin.version };
    assertCompatible(plugin, full, origin.packageRange);
    this.registry.addPlugin(full);
    const provide = Object.fromEntries(
      PLUGIN_KINDS.map((kind) => [kind, (value: never) => this.registry.add(kind, value, full)]),
    ) as unknown as Provide;
    const api: PluginApi = Object.freeze({
      hooks: scopeHooks(this.hooks, plugin.name, {
        defaultMs: this.config.hooks.timeoutMs,
        perHook: this.config.hooks.perHookTimeoutMs,
      }),
      provide,
      container: this.container,
      log: {
        info: (m: string) => this.logger.info(`[${plugin.name}] ${m}`),
        warn: (m: string) => this.logger.warn(`[${plugin.name}] ${m}`),
      },
    });
    try {
      await plugin.apply(api);
    } catch (err) {
      if (isClawGymError(err)) throw err;
      throw new ClawGymError(ErrorCodes.PLUGIN_APPLY, `plugin "${plugin.name}" failed while loading: ${messageOf(err)}`, { cause: err });
    }
  }

  /** Release the run's services. */
  async dispose(): Promise<void> {
    await this.container.dispose();
  }
}
