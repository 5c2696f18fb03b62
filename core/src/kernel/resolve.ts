import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf } from '../errors';
import { loadModule } from '../util/load-module';
import { KIND_PREFIX, PLUGIN_KINDS, isPlugin, type ClawGymPlugin, type PluginKind } from '../contracts/plugin';
import { withArticle } from '../util/article';

const PREFIXED = new RegExp(`^(${Object.values(KIND_PREFIX).join('|')})-`);

/**
 * Names that ClawGym's own packages provide under another package's name (`clawgym.provides` in
 * their package.json; `resolve.test.ts` checks this against them): a missing one is found, and
 * installed, by the package that provides it. Third-party packages are found by discovery once
 * installed.
 */
export const SHIPPED_UNDER_ANOTHER_NAME: Readonly<Partial<Record<PluginKind, Readonly<Record<string, string>>>>> = {
  engine: { sglang: '@clawgym/engine-vllm' },
};

/**
 * Expand a plugin name into the packages to try, in order (Babel/Docusaurus-style):
 *
 * - `grpo` (slot kind `algorithm`) → `@clawgym/algo-grpo`, `clawgym-plugin-grpo`
 * - `embedded` (slot kind `trainer`) → `@clawgym/trainer-embedded`, `@clawgym/engine-embedded`, `clawgym-plugin-embedded`
 * - `grpo` (kind unknown) → `@clawgym/harness-grpo`, `@clawgym/task-grpo`, ... , `clawgym-plugin-grpo`
 * - `algo-grpo` → `@clawgym/algo-grpo`, `clawgym-plugin-algo-grpo`
 * - `@acme/x` → `@acme/clawgym-plugin-x`, `@acme/x`
 * - full names (`@clawgym/…`, `clawgym-plugin-…`, `@acme/clawgym-plugin-…`) and paths → themselves
 * - `sglang` (slot kind `engine`) → `@clawgym/engine-vllm` (which provides it: {@link SHIPPED_UNDER_ANOTHER_NAME}), `@clawgym/engine-sglang`, `clawgym-plugin-sglang`
 */
export function pluginCandidates(name: string, kind?: PluginKind): string[] {
  const shipped = kind ? SHIPPED_UNDER_ANOTHER_NAME[kind]?.[name] : undefined;
  return shipped ? [shipped, ...candidatesByName(name, kind)] : candidatesByName(name, kind);
}

function candidatesByName(name: string, kind?: PluginKind): string[] {
  if (name.startsWith('.') || isAbsolute(name)) return [name];
  if (name.startsWith('@clawgym/') || name.startsWith('clawgym-plugin-')) return [name];
  const scoped = /^(@[^/]+)\/(.+)$/.exec(name);
  if (scoped) {
    const [, scope, rest] = scoped;
    return rest!.startsWith('clawgym-plugin-') ? [name] : [`${scope}/clawgym-plugin-${rest}`, name];
  }
  if (PREFIXED.test(name)) return [`@clawgym/${name}`, `clawgym-plugin-${name}`];
  // An engine package may provide the trainer that shares its weights (engine-embedded does).
  const kinds = kind === 'trainer' ? (['trainer', 'engine'] as const) : kind ? [kind] : PLUGIN_KINDS;
  return [...kinds.map((k) => `@clawgym/${KIND_PREFIX[k]}-${name}`), `clawgym-plugin-${name}`];
}

/** A plugin package found on disk. */
export interface PluginPackage {
  packageName: string;
  version?: string;
  dir: string;
  /** The module to load (the package's main entry). */
  entry: string;
  /** `peerDependencies["@clawgym/core"]` of the package, when declared. */
  coreRange?: string;
  keywords: string[];
  /**
   * Provider names the package declares in `package.json` under `clawgym.provides` (kind → names),
   * so a name that is not the package's own resolves to it (`engine: 'sglang'` → `@clawgym/engine-vllm`).
   */
  provides: Partial<Record<PluginKind, string[]>>;
}

interface PackageJson {
  name?: string;
  version?: string;
  keywords?: string[];
  peerDependencies?: Record<string, string>;
  clawgym?: { provides?: Partial<Record<PluginKind, string[]>> };
}

/** Read a package folder's package.json into a {@link PluginPackage}. */
export function readPluginPackage(dir: string, entry: string): PluginPackage {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
  return {
    packageName: pkg.name ?? dir,
    version: pkg.version,
    dir,
    entry,
    coreRange: pkg.peerDependencies?.['@clawgym/core'],
    keywords: pkg.keywords ?? [],
    provides: pkg.clawgym?.provides ?? {},
  };
}

function packageDirOf(entry: string): string {
  let dir = dirname(entry);
  for (;;) {
    try {
      readFileSync(join(dir, 'package.json'));
      return dir;
    } catch {
      const up = dirname(dir);
      if (up === dir) return dirname(entry);
      dir = up;
    }
  }
}

/** Resolve with Node's own algorithm, as a module in `fromDir` would (never a bundler's or jest's mapping). */
export function tryResolve(candidate: string, fromDir: string): string | undefined {
  try {
    const requireFrom = createRequire(join(fromDir, '__clawgym_resolve__.js'));
    return requireFrom.resolve(candidate.startsWith('.') ? resolvePath(fromDir, candidate) : candidate);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
}

/**
 * Find the package of a plugin name, resolving from `fromDir` (the config file's folder).
 * Fails with every candidate tried.
 */
export function findPluginPackage(name: string, fromDir: string, kind?: PluginKind): PluginPackage {
  const candidates = pluginCandidates(name, kind);
  for (const candidate of candidates) {
    const entry = tryResolve(candidate, fromDir);
    if (entry) return readPluginPackage(packageDirOf(entry), entry);
  }
  throw new ClawGymError(
    ErrorCodes.PLUGIN_NOT_FOUND,
    `cannot find plugin "${name}"${kind ? ` (${withArticle(kind)})` : ''} from ${fromDir}. Tried:\n${candidates.map((c) => `  - ${c}`).join('\n')}`,
    { hint: `Install one of them (npm i -D ${candidates[0]}) or import the plugin object in clawgym.config.ts.` },
  );
}

/** Turn a module's export into a plugin object: a factory is called with the options. */
export function instantiatePlugin(exported: unknown, options: Record<string, unknown> | undefined, from: string): ClawGymPlugin {
  const value = typeof exported === 'function' ? (exported as (o?: unknown) => unknown)(options) : exported;
  if (!isPlugin(value)) {
    throw new ClawGymError(
      ErrorCodes.PLUGIN_INVALID,
      `${from} does not export a ClawGym plugin (expected a factory returning { name, apply } or such an object)`,
    );
  }
  return value;
}

/** Load the plugin of a package: its default export (factory or object). */
export function loadPluginFromPackage(pkg: PluginPackage, options?: Record<string, unknown>): ClawGymPlugin {
  let exported: unknown;
  try {
    exported = loadModule(pkg.entry);
  } catch (err) {
    throw new ClawGymError(ErrorCodes.PLUGIN_INVALID, `plugin package ${pkg.packageName} failed to load: ${messageOf(err)}`, { cause: err });
  }
  try {
    return instantiatePlugin(exported, options, `package ${pkg.packageName}`);
  } catch (err) {
    if (isClawGymError(err)) throw err;
    throw new ClawGymError(ErrorCodes.PLUGIN_INVALID, `plugin factory of ${pkg.packageName} threw: ${messageOf(err)}`, { cause: err });
  }
}
