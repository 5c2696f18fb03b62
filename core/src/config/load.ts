import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { cosmiconfigSync, type Loader } from 'cosmiconfig';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf } from '../errors';
import { deepFreeze } from '../util/freeze';
import { loadModule } from '../util/load-module';
import { ConfigSchema, type ClawGymConfig, type ResolvedConfig } from './schema';
import { parseWithSchema } from './validate';

/** Where cosmiconfig looks, in order. */
export const CONFIG_FILES = [
  'package.json',
  'clawgym.config.ts',
  'clawgym.config.mts',
  'clawgym.config.cts',
  'clawgym.config.js',
  'clawgym.config.mjs',
  'clawgym.config.cjs',
] as const;

const moduleLoader: Loader = (file) => loadModule(file);

function explorer() {
  return cosmiconfigSync('clawgym', {
    searchPlaces: [...CONFIG_FILES],
    searchStrategy: 'project',
    cache: false,
    loaders: { '.ts': moduleLoader, '.mts': moduleLoader, '.cts': moduleLoader, '.js': moduleLoader, '.mjs': moduleLoader, '.cjs': moduleLoader },
  });
}

/** Validate, default and freeze a config object. */
export function resolveConfig(raw: ClawGymConfig | unknown, where: { rootDir: string; configFile?: string }): ResolvedConfig {
  const label = where.configFile ? `config (${where.configFile})` : 'config';
  const parsed = parseWithSchema(ConfigSchema, raw, label);
  return deepFreeze({ ...parsed, rootDir: where.rootDir, configFile: where.configFile });
}

/**
 * Find and load the ClawGym config: `--config <file>` if given, else `clawgym.config.{ts,mts,js,mjs}`
 * or a `clawgym` key in package.json, searched from `cwd` up to the project root.
 */
/**
 * The config as `loadConfig` finds it, or the defaults (rooted at `cwd`) when there is no config
 * file and none was named: for commands that work without one (`doctor`, `gc`, `plugins`).
 */
export function loadConfigOrDefaults(options: { cwd: string; configFile?: string }): ResolvedConfig {
  try {
    return loadConfig(options);
  } catch (err) {
    if ((err as ClawGymError).code !== ErrorCodes.CONFIG_NOT_FOUND || options.configFile) throw err;
    return resolveConfig({}, { rootDir: options.cwd });
  }
}

export function loadConfig(options: { cwd?: string; configFile?: string } = {}): ResolvedConfig {
  const cwd = resolve(options.cwd ?? process.cwd());
  let found: { config: unknown; filepath: string } | null;
  try {
    if (options.configFile) {
      const file = resolve(cwd, options.configFile);
      if (!existsSync(file)) {
        throw new ClawGymError(ErrorCodes.CONFIG_NOT_FOUND, `config file not found: ${file}`);
      }
      found = explorer().load(file);
    } else {
      found = explorer().search(cwd);
    }
  } catch (err) {
    if (isClawGymError(err)) throw err;
    throw new ClawGymError(ErrorCodes.CONFIG_LOAD, `could not load the config: ${messageOf(err)}`, {
      cause: err,
      hint: 'Check that the config file parses and that every module it imports is installed.',
    });
  }
  if (!found) {
    throw new ClawGymError(ErrorCodes.CONFIG_NOT_FOUND, `no ClawGym config found from ${cwd}`, {
      hint: `Create clawgym.config.ts (export default defineConfig({...})) or pass --config <file>.`,
    });
  }
  return resolveConfig(found.config ?? {}, { rootDir: dirname(found.filepath), configFile: found.filepath });
}
