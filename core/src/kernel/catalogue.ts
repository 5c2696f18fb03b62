import type { ResolvedConfig } from '../config/schema';
import { nearest } from '../config/suggest';
import { messageOf } from '../errors';
import { KIND_PREFIX, type PluginKind } from '../contracts/plugin';
import { withArticle } from '../util/article';
import { discoverInstalled } from './discover';
import { Kernel } from './kernel';
import { loadPluginFromPackage, type PluginPackage, type Suggestion } from './resolve';

/** One installed plugin package and what its plugin provides (or why it cannot be used). */
export interface CatalogueEntry {
  packageName: string;
  version?: string;
  /** The loaded package; absent when it could not be loaded. */
  pkg?: PluginPackage;
  /** The plugin's own name (`tasks-demo`). */
  plugin?: string;
  provides: { kind: PluginKind; name: string }[];
  /** Why the package cannot be used (no `dist/`, not a plugin, its factory threw). */
  error?: string;
}

const quiet = { info: () => {}, warn: () => {} };

/**
 * Every installed plugin package visible from the config's folder, each loaded into a scratch
 * kernel of its own (so one bad or duplicate plugin hides none of the rest), with what it
 * provides. `clawgym plugins` lists it; a name that is not found is matched against it.
 */
export async function installedCatalogue(config: ResolvedConfig): Promise<CatalogueEntry[]> {
  const { packages, unusable } = discoverInstalled(config.rootDir);
  const entries: CatalogueEntry[] = [];
  for (const pkg of packages) {
    const kernel = new Kernel(config, { logger: quiet });
    try {
      const plugin = loadPluginFromPackage(pkg);
      await kernel.use(plugin, { packageName: pkg.packageName, version: pkg.version, packageRange: pkg.coreRange });
      const provides = kernel.registry.entries().map((e) => ({ kind: e.kind, name: e.name }));
      entries.push({ packageName: pkg.packageName, version: pkg.version, pkg, plugin: plugin.name, provides });
    } catch (err) {
      entries.push({ packageName: pkg.packageName, version: pkg.version, provides: [], error: messageOf(err) });
    }
  }
  for (const u of unusable) entries.push({ packageName: u.packageName, version: u.version, provides: [], error: u.error.message });
  return entries.sort((a, b) => a.packageName.localeCompare(b.packageName));
}

/** The short names a package answers to: its plugin's name and its package name without the prefix. */
function shortNames(e: CatalogueEntry): string[] {
  const bare = e.packageName.replace(/^@[^/]+\//, '').replace(/^clawgym-plugin-/, '');
  const unprefixed = e.packageName.startsWith('@clawgym/') ? bare.replace(new RegExp(`^(${Object.values(KIND_PREFIX).join('|')})-`), '') : bare;
  return [...new Set([e.plugin?.replace(/^clawgym:/, ''), bare, unprefixed].filter((n): n is string => !!n))];
}

const at = (e: { packageName: string; version?: string }) => `${e.packageName}${e.version ? `@${e.version}` : ''}`;

/**
 * The nearest installed name to a name that was not found ("did you mean"): a provider of the
 * kind, or a package's own name — then what that package provides of the kind, which is what the
 * config must name. `registered` are providers already in the kernel (core's built-ins).
 */
export function suggestName(name: string, kind: PluginKind | undefined, catalogue: readonly CatalogueEntry[], registered: readonly { kind: PluginKind; name: string; packageName: string }[] = []): Suggestion | undefined {
  const options = new Map<string, Suggestion>();
  const offer = (key: string, s: Suggestion) => { if (!options.has(key)) options.set(key, s); };
  for (const r of registered) if (!kind || r.kind === kind) offer(r.name, { name: r.name, from: `${withArticle(r.kind)} from ${r.packageName}` });
  for (const e of catalogue) {
    if (e.error) continue;
    const own = e.provides.filter((p) => !kind || p.kind === kind);
    for (const p of own) offer(p.name, { name: p.name, from: `${withArticle(p.kind)} from ${at(e)}` });
    for (const short of shortNames(e)) {
      if (!kind) offer(short, { name: short, from: `the plugin of ${at(e)}` });
      else if (own.length) offer(short, { name: own[0]!.name, from: `the ${kind} that ${at(e)}, plugin "${e.plugin}", provides` });
    }
  }
  const key = nearest(name, [...options.keys()]);
  return key === undefined ? undefined : options.get(key);
}
