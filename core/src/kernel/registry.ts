import { ClawGymError, ErrorCodes } from '../errors';
import { PLUGIN_KINDS, type PluginKind, type ProvidedKinds } from '../contracts/plugin';
import { withArticle } from '../util/article';

/** Where a plugin came from: for error messages and `clawgym plugins`. */
export interface PluginOrigin {
  plugin: string;
  /** npm package, or `(config)` for an object given in the config file. */
  packageName: string;
  version?: string;
}

export interface RegistryEntry<K extends PluginKind> {
  kind: K;
  name: string;
  value: ProvidedKinds[K];
  origin: PluginOrigin;
}

const describe = (o: PluginOrigin) => `${o.packageName}${o.version ? `@${o.version}` : ''} (plugin "${o.plugin}")`;

/** What plugins provided, by kind and name. The only way the pipeline finds a provider. */
export class Registry {
  private readonly byKind = new Map<PluginKind, Map<string, RegistryEntry<PluginKind>>>(
    PLUGIN_KINDS.map((k) => [k, new Map()]),
  );
  private readonly plugins = new Map<string, PluginOrigin>();

  /** Record a plugin by name; a second plugin with the same name is an error naming both packages. */
  addPlugin(origin: PluginOrigin): void {
    const prior = this.plugins.get(origin.plugin);
    if (prior) {
      throw new ClawGymError(
        ErrorCodes.PLUGIN_DUPLICATE,
        `two plugins are named "${origin.plugin}": ${describe(prior)} and ${describe(origin)}`,
        { hint: 'Remove one of them from the config (or from node_modules).' },
      );
    }
    this.plugins.set(origin.plugin, origin);
  }

  add<K extends PluginKind>(kind: K, value: ProvidedKinds[K], origin: PluginOrigin): void {
    const name = (value as { name?: unknown }).name;
    if (typeof name !== 'string' || name.length === 0) {
      throw new ClawGymError(ErrorCodes.PLUGIN_INVALID, `${describe(origin)} provided ${withArticle(kind)} without a name`);
    }
    const map = this.byKind.get(kind)!;
    const prior = map.get(name);
    if (prior) {
      throw new ClawGymError(
        ErrorCodes.PLUGIN_DUPLICATE,
        `${kind} "${name}" is provided twice: by ${describe(prior.origin)} and by ${describe(origin)}`,
        { hint: 'Keep one of the two plugins.' },
      );
    }
    map.set(name, { kind, name, value, origin } as RegistryEntry<PluginKind>);
  }

  has(kind: PluginKind, name: string): boolean {
    return this.byKind.get(kind)!.has(name);
  }

  /** The provider of `kind` called `name`; the error lists what is available. */
  get<K extends PluginKind>(kind: K, name: string): ProvidedKinds[K] {
    const entry = this.byKind.get(kind)!.get(name);
    if (!entry) {
      const names = [...this.byKind.get(kind)!.keys()];
      throw new ClawGymError(
        ErrorCodes.PROVIDER_MISSING,
        `no ${kind} named "${name}" is registered${names.length ? ` (registered: ${names.join(', ')})` : ''}`,
        { hint: `Add the plugin that provides it to "plugins" in clawgym.config.ts.` },
      );
    }
    return entry.value as ProvidedKinds[K];
  }

  entries(kind?: PluginKind): RegistryEntry<PluginKind>[] {
    const kinds = kind ? [kind] : PLUGIN_KINDS;
    return kinds.flatMap((k) => [...this.byKind.get(k)!.values()]);
  }

  pluginOrigins(): PluginOrigin[] {
    return [...this.plugins.values()];
  }
}
