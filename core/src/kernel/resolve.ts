import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf } from '../errors';
import { loadModule } from '../util/load-module';
import { KIND_PREFIX, PLUGIN_KINDS, isPlugin, type ClawGymPlugin, type PluginKind } from '../contracts/plugin';
import { withArticle } from '../util/article';
import { installedPackageDir, unusablePackage } from './unusable';

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
 * The plugin packages ClawGym publishes (`resolve.test.ts` checks this against the workspace's
 * package names). An install hint names a package only when it is one of these: a name merely
 * guessed from a typo (`@clawgym/task-taks-demo`) does not exist, and `clawgym doctor --fix` must
 * never install whatever answers to a guessed name.
 */
export const SHIPPED_PACKAGES: readonly string[] = [
  '@clawgym/algo-grpo', '@clawgym/algo-ppo', '@clawgym/engine-embedded', '@clawgym/engine-tinker', '@clawgym/engine-vllm',
  '@clawgym/harness-agentloop', '@clawgym/harness-claude-code', '@clawgym/harness-codex', '@clawgym/harness-gemini-cli',
  '@clawgym/harness-grok', '@clawgym/harness-kilo', '@clawgym/harness-openclaw', '@clawgym/harness-opencode', '@clawgym/harness-pi', '@clawgym/harness-qwen-code',
  '@clawgym/kernels-cpu', '@clawgym/kernels-gpujs', '@clawgym/model-hf', '@clawgym/sandbox-docker', '@clawgym/standins',
  '@clawgym/task-builtin', '@clawgym/task-formats', '@clawgym/task-jobbench', '@clawgym/task-officeqa',
  '@clawgym/harness-cline', '@clawgym/harness-continue',
  '@clawgym/harness-droid', '@clawgym/harness-copilot',
  '@clawgym/harness-omp',
];

/** The published package to install for a name (the first candidate ClawGym ships), if any. */
export function shippedPackageFor(name: string, kind?: PluginKind): string | undefined {
  return pluginCandidates(name, kind).find((c) => SHIPPED_PACKAGES.includes(c));
}

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
 * Fails with every candidate tried; a candidate installed without a loadable entry (no `dist/`)
 * fails as such, never as "cannot find".
 */
export function findPluginPackage(name: string, fromDir: string, kind?: PluginKind): PluginPackage {
  const candidates = pluginCandidates(name, kind);
  for (const candidate of candidates) {
    const entry = tryResolve(candidate, fromDir);
    if (entry) return readPluginPackage(packageDirOf(entry), entry);
  }
  for (const candidate of candidates) {
    const dir = installedPackageDir(candidate, fromDir);
    if (dir) throw unusablePackage(candidate, dir);
  }
  throw pluginNotFound(name, fromDir, kind);
}

/** A name that an installed plugin answers to, offered when a name is not found ("did you mean"). */
export interface Suggestion {
  /** What to write instead. */
  name: string;
  /** Where it comes from, e.g. `taskSuite "count-lines" from clawgym-plugin-tasks-demo@1.0.0`. */
  from: string;
}

/**
 * The error for a plugin name that nothing answers to: every candidate tried, the nearest
 * installed name when there is one, and an install command only for a package ClawGym publishes.
 */
export function pluginNotFound(name: string, fromDir: string, kind?: PluginKind, suggestion?: Suggestion): ClawGymError {
  const candidates = pluginCandidates(name, kind);
  const shipped = shippedPackageFor(name, kind);
  const hint = suggestion ? `Did you mean "${suggestion.name}" (${suggestion.from})? \`clawgym plugins\` lists what is installed.`
    : shipped ? `Install it (npm i -D ${shipped}) or import the plugin object in clawgym.config.ts.`
      : `No ClawGym package is called so and nothing installed answers to "${name}": check the name against \`clawgym plugins\`, or install the plugin's package by its own name (a community plugin is usually clawgym-plugin-<name>).`;
  return new ClawGymError(
    ErrorCodes.PLUGIN_NOT_FOUND,
    `cannot find plugin "${name}"${kind ? ` (${withArticle(kind)})` : ''} from ${fromDir}; tried ${candidates.join(', ')}`,
    { hint },
  );
}

/** A value that is not a plugin, in a few words, for the error that refuses it. */
function shapeOf(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  const keys = Object.keys(value);
  return keys.length ? `an object with ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', …' : ''} but no name and apply()` : 'an empty object';
}

/** Turn a module's export into a plugin object: a factory is called with the options. */
export function instantiatePlugin(exported: unknown, options: Record<string, unknown> | undefined, from: string): ClawGymPlugin {
  const value = typeof exported === 'function' ? (exported as (o?: unknown) => unknown)(options) : exported;
  if (!isPlugin(value)) {
    throw new ClawGymError(
      ErrorCodes.PLUGIN_INVALID,
      `${from} exports nothing usable: its export is ${typeof exported === 'function' ? `a function that returned ${shapeOf(value)}` : shapeOf(value)}`,
      { hint: 'A plugin module\'s default export is a factory returning { name, apply } (definePlugin makes one), or such an object.' },
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
    return instantiatePlugin(exported, options, `the plugin package ${pkg.packageName}${pkg.version ? `@${pkg.version}` : ''}`);
  } catch (err) {
    if (isClawGymError(err)) throw err;
    throw new ClawGymError(ErrorCodes.PLUGIN_INVALID, `plugin factory of ${pkg.packageName} threw: ${messageOf(err)}`, { cause: err });
  }
}
