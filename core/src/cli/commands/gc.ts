import { loadConfigOrDefaults } from '../../config/load';
import { messageOf } from '../../errors';
import { provider } from '../../kernel/create';
import { createKernel } from '../../run/create-kernel';

/**
 * `clawgym gc`: remove what killed runs of this project left behind — sandbox processes,
 * cgroups, temp folders, containers — from every sandbox provider the config loads (the local
 * one always). Another project's leftovers on the machine (its runs may share names with this
 * one's) are left alone unless `--all`.
 */
export async function gc(opts: { config?: string; run?: string; all?: boolean }, io: { out: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfigOrDefaults({ cwd: io.cwd, configFile: opts.config });
  const kernel = await createKernel(config, { logger: { info: () => {}, warn: () => {} } });
  // The configured sandbox may come from a package not loaded yet.
  await provider(kernel, 'sandbox', config.sandbox).catch(() => undefined);
  for (const entry of kernel.registry.entries('sandbox')) {
    const sandboxes = entry.value as { name: string; sweep(runId?: string, scope?: { project?: string }): Promise<{ removed: string[] }> };
    try {
      const { removed } = await sandboxes.sweep(opts.run, opts.all ? undefined : { project: config.rootDir });
      io.out(`${sandboxes.name}: removed ${removed.length}${removed.length ? `\n${removed.map((r) => `  ${r}`).join('\n')}` : ''}\n`);
    } catch (err) {
      io.out(`${sandboxes.name}: could not sweep (${messageOf(err)})\n`);
    }
  }
  if (!opts.all) io.out(`(this project's leftovers only, ${config.rootDir}; \`clawgym gc --all\` sweeps every project's)\n`);
  await kernel.dispose();
}
