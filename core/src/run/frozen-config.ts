import type { ResolvedConfig } from '../config/schema';

/** Plain data of the config, for `config.json` in the run directory (plugin objects by name). */
export function frozenConfig(config: ResolvedConfig): Record<string, unknown> {
  return JSON.parse(JSON.stringify(config, (k, v) => (v && typeof v === 'object' && typeof v.apply === 'function' ? `[plugin ${v.name}]` : v)));
}
