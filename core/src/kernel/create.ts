import type { ResolvedConfig } from '../config/schema';
import type { Logger, PluginKind, ProvidedKinds } from '../contracts/plugin';
import type { Kernel } from './kernel';
import { discoverPluginPackages } from './discover';
import { findPluginPackage, loadPluginFromPackage, type PluginPackage } from './resolve';
import { isPlugin } from '../contracts/plugin';

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
 * declares it under `clawgym.provides` (one package may provide several engines).
 */
function packageOf(name: string, fromDir: string, kind?: PluginKind): PluginPackage {
  try {
    return findPluginPackage(name, fromDir, kind);
  } catch (err) {
    const declaring = kind && discoverPluginPackages(fromDir).find((p) => p.provides[kind]?.includes(name));
    if (declaring) return declaring;
    throw err;
  }
}

/** Load one plugin reference from the config (object, name or `[name, options]`) into the kernel. */
export async function usePluginRef(kernel: Kernel, ref: ResolvedConfig['plugins'][number], kind?: PluginKind): Promise<void> {
  if (isPlugin(ref)) {
    await kernel.use(ref);
    return;
  }
  const [name, options] = typeof ref === 'string' ? [ref, undefined] : ref;
  const pkg = packageOf(name, kernel.config.rootDir, kind);
  const plugin = loadPluginFromPackage(pkg, options);
  await kernel.use(plugin, { packageName: pkg.packageName, version: pkg.version, packageRange: pkg.coreRange });
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
    await usePluginRef(kernel, options ? [name, options] : name, kind);
  }
  return kernel.registry.get(kind, name);
}

