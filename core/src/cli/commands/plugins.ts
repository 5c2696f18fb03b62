import { loadConfigOrDefaults } from '../../config/load';
import { messageOf } from '../../errors';
import { installedCatalogue } from '../../kernel/catalogue';
import { Kernel } from '../../kernel/kernel';
import { usePluginRef } from '../../kernel/create';
import { useBuiltins } from '../../builtins';
import type { PluginOrigin } from '../../kernel/registry';

/** One row of `clawgym plugins`: something a plugin provides. */
export interface PluginRow {
  kind: string;
  name: string;
  version: string;
  packageName: string;
  plugin: string;
  error?: string;
}

/**
 * Discover every plugin visible from `fromDir` (installed packages plus the config's own
 * plugins) and list what each provides. A plugin that fails to load is listed with its error.
 */
export async function listPlugins(options: { cwd: string; configFile?: string }): Promise<PluginRow[]> {
  const config = loadConfigOrDefaults({ cwd: options.cwd, configFile: options.configFile });
  const quiet = { info: () => {}, warn: () => {} };
  const rows: PluginRow[] = [];
  const describe = (kernel: Kernel, origin: PluginOrigin) => {
    const entries = kernel.registry.entries().filter((e) => e.origin.plugin === origin.plugin);
    for (const e of entries) {
      rows.push({ kind: e.kind, name: e.name, version: origin.version ?? '-', packageName: origin.packageName, plugin: origin.plugin });
    }
    if (entries.length === 0) {
      rows.push({ kind: 'hooks', name: origin.plugin, version: origin.version ?? '-', packageName: origin.packageName, plugin: origin.plugin });
    }
  };
  const core = new Kernel(config, { logger: quiet });
  await useBuiltins(core);
  describe(core, core.registry.pluginOrigins()[0]!);
  // Each package is loaded in a scratch kernel of its own; one that cannot be used is listed with why.
  for (const e of await installedCatalogue(config)) {
    const version = e.version ?? '-';
    if (e.error) rows.push({ kind: '(unusable)', name: e.packageName, version, packageName: e.packageName, plugin: '?', error: e.error });
    else if (e.provides.length === 0) rows.push({ kind: 'hooks', name: e.plugin!, version, packageName: e.packageName, plugin: e.plugin! });
    else for (const p of e.provides) rows.push({ kind: p.kind, name: p.name, version, packageName: e.packageName, plugin: e.plugin! });
  }
  for (const ref of config.plugins) {
    const kernel = new Kernel(config, { logger: quiet });
    try {
      await usePluginRef(kernel, ref);
      const origin = kernel.registry.pluginOrigins()[0]!;
      if (!rows.some((r) => r.packageName === origin.packageName && r.plugin === origin.plugin)) describe(kernel, origin);
    } catch (err) {
      rows.push({ kind: '?', name: String(Array.isArray(ref) ? ref[0] : typeof ref === 'string' ? ref : ref.name), version: '-', packageName: '(config)', plugin: '?', error: messageOf(err) });
    }
  }
  return rows;
}

/** Format rows as an aligned table. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
