import type { ResolvedConfig } from '../config/schema';
import type { Logger, PluginKind, ProvidedKinds } from '../contracts/plugin';
import type { Kernel } from './kernel';
import { discoverPluginPackages } from './discover';
import { findPluginPackage, loadPluginFromPackage, pluginNotFound, type PluginPackage } from './resolve';
import { isPlugin } from '../contracts/plugin';
import { installedCatalogue, suggestName } from './catalogue';
import { ClawGymError, ErrorCodes, isClawGymError } from '../errors';
import { withArticle } from '../util/article';

/** A slot value from the config: a provider name, or `{ use, options }`. */
export type SlotRef = string | { use: string; options: Record<string, unknown> };

/** The options a slot gives its provider (none for a bare name). */
export const slotOptions = (slot: SlotRef): Record<string, unknown> => (typeof slot === 'string' ? {} : slot.options);

/** The provider name a slot gives. */
export const slotName = (slot: SlotRef): string => (typeof slot === 'string' ? slot : slot.use);

/**
 * The trainer slot's options. A trainer named like the engine with no options of its own
 * (`engine: { use: 'embedded', options }, trainer: 'embedded'`) shares the engine's: they are one
 * model, so its shape and checkpoint are written once.
 */
export function trainerOptions(config: Pick<ResolvedConfig, 'engine' | 'trainer'>): Record<string, unknown> {
  const own = slotOptions(config.trainer);
  return Object.keys(own).length === 0 && slotName(config.trainer) === slotName(config.engine) ? slotOptions(config.engine) : own;
}

/**
 * The package of a plugin name: by its name's candidates, else an installed plugin package that
 * declares it under `clawgym.provides` (one package may provide several engines), else one that
 * provides it without declaring it (what `clawgym plugins` lists can be named). When none does,
 * the error offers the nearest installed name.
 */
async function packageOf(name: string, kernel: Kernel, kind?: PluginKind): Promise<PluginPackage> {
  const fromDir = kernel.config.rootDir;
  try {
    return findPluginPackage(name, fromDir, kind);
  } catch (err) {
    if (!isClawGymError(err) || err.code !== ErrorCodes.PLUGIN_NOT_FOUND) throw err;
    const declaring = kind && discoverPluginPackages(fromDir).find((p) => p.provides[kind]?.includes(name));
    if (declaring) return declaring;
    const catalogue = await installedCatalogue(kernel.config);
    const providing = kind && catalogue.find((e) => e.pkg && e.provides.some((p) => p.kind === kind && p.name === name));
    if (providing) return providing.pkg!;
    const registered = kernel.registry.entries().map((e) => ({ kind: e.kind, name: e.name, packageName: e.origin.packageName }));
    throw pluginNotFound(name, fromDir, kind, suggestName(name, kind, catalogue, registered));
  }
}

/** Load one plugin reference from the config (object, name or `[name, options]`) into the kernel; returns the package loaded, if any. */
export async function usePluginRef(kernel: Kernel, ref: ResolvedConfig['plugins'][number], kind?: PluginKind): Promise<PluginPackage | undefined> {
  if (isPlugin(ref)) {
    await kernel.use(ref);
    return undefined;
  }
  const [name, options] = typeof ref === 'string' ? [ref, undefined] : ref;
  const pkg = await packageOf(name, kernel, kind);
  // A slot naming a package already loaded (by another slot) finds its providers there.
  if (kind && kernel.registry.pluginOrigins().some((o) => o.packageName === pkg.packageName)) return pkg;
  const plugin = loadPluginFromPackage(pkg, options);
  await kernel.use(plugin, { packageName: pkg.packageName, version: pkg.version, packageRange: pkg.coreRange });
  return pkg;
}

/** The config key of each kind's slot, for messages that say what to write. */
const SLOT_KEY: Record<PluginKind, string> = {
  harness: 'harnesses', taskSuite: 'tasks', algorithm: 'algorithm', sandbox: 'sandbox', engine: 'engine',
  trainer: 'trainer', kernels: 'kernels', reporter: 'reporters', policyLoss: 'policyLoss',
};

/**
 * A slot named a package (found by the name) that provides no such `kind`: usually the plugin's
 * own name where the name of what it provides belongs (`tasks: ['tasks-demo']` for a package
 * whose suite is `count-lines`).
 */
function namedByPackage(kernel: Kernel, kind: PluginKind, name: string, pkg: PluginPackage): ClawGymError {
  const mine = kernel.registry.entries().filter((e) => e.origin.packageName === pkg.packageName);
  const own = mine.filter((e) => e.kind === kind).map((e) => e.name);
  const others = mine.map((e) => `${e.kind} "${e.name}"`);
  const from = `${pkg.packageName}${pkg.version ? `@${pkg.version}` : ''}`;
  const list = SLOT_KEY[kind].endsWith('s');
  return new ClawGymError(
    ErrorCodes.PROVIDER_MISSING,
    own.length
      ? `"${name}" names the plugin package ${from}, not ${withArticle(kind)}: the package provides ${kind} ${own.map((n) => `"${n}"`).join(', ')}`
      : `"${name}" names the plugin package ${from}, which provides no ${kind}${others.length ? ` (it provides ${others.join(', ')})` : ''}`,
    {
      hint: own.length
        ? `Name what it provides: ${SLOT_KEY[kind]}: ${list ? `['${own[0]}']` : `'${own[0]}'`} in clawgym.config.ts.`
        : `Use the package in "plugins" if it only taps hooks, and name ${withArticle(kind)} that \`clawgym plugins\` lists for "${SLOT_KEY[kind]}".`,
    },
  );
}

/**
 * The provider a config slot names. If no loaded plugin provides it, the name is resolved as a
 * package of that kind (`algorithm: 'grpo'` → `@clawgym/algo-grpo`) and loaded first.
 */
export async function provider<K extends PluginKind>(kernel: Kernel, kind: K, slot: SlotRef): Promise<ProvidedKinds[K]> {
  const name = slotName(slot);
  if (!kernel.registry.has(kind, name)) {
    // A sandbox plugin provides one configured instance, so the slot's options are the plugin's
    // (`sandbox: { use: 'docker', options: { image } }`); engines and trainers get theirs in create().
    const options = kind === 'sandbox' && typeof slot !== 'string' ? slot.options : undefined;
    const pkg = await usePluginRef(kernel, options ? [name, options] : name, kind);
    if (pkg && !kernel.registry.has(kind, name)) throw namedByPackage(kernel, kind, name, pkg);
  }
  return kernel.registry.get(kind, name);
}

