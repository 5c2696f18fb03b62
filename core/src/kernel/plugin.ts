import type { z } from 'zod';
import { parseWithSchema } from '../config/validate';
import type { ClawGymPlugin, PluginApi } from '../contracts/plugin';


/**
 * Define a plugin factory whose options are validated by a zod schema. Invalid options fail
 * with the key path and a "Did you mean" suggestion, like the config itself.
 */
export function definePlugin<S extends z.ZodType>(def: {
  name: string;
  core?: string;
  options: S;
  apply(api: PluginApi, options: z.output<S>): void | Promise<void>;
}): (options?: z.input<S>) => ClawGymPlugin {
  return (raw?: z.input<S>) => {
    const options = parseWithSchema(def.options, raw ?? {}, `options of plugin "${def.name}"`);
    return { name: def.name, core: def.core, apply: (api) => def.apply(api, options) };
  };
}
