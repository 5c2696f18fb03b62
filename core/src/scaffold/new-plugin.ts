import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import type { PluginKind } from '../contracts/plugin';
import { pluginSources, type NewPluginKind } from './plugin-sources';

export const NEW_PLUGIN_KINDS: readonly NewPluginKind[] = ['task', 'harness', 'hooks', 'algorithm', 'reporter'];

/** The registry kind each new plugin provides (a hooks plugin provides nothing: the config's `plugins` lists it). */
const PROVIDES: Record<NewPluginKind, PluginKind | undefined> = { task: 'taskSuite', harness: 'harness', hooks: undefined, algorithm: 'algorithm', reporter: 'reporter' };

/** What `clawgym new plugin` made. */
export interface NewPlugin {
  dir: string;
  packageName: string;
  /** The provider's name, as the config names it. */
  name: string;
  files: string[];
}

const NAME = /^(?:@([a-z0-9][a-z0-9._-]*)\/)?([a-z0-9][a-z0-9._-]*)$/;

/**
 * The package and provider names of a new plugin: `reverse` → `clawgym-plugin-reverse` providing
 * `reverse`; `@acme/reverse` → `@acme/clawgym-plugin-reverse`. Discovery finds packages by these
 * names (and the `clawgym-plugin` keyword), so the config can say `tasks: ['reverse']`.
 */
export function pluginNames(raw: string): { packageName: string; name: string; id: string } {
  const m = NAME.exec(raw);
  if (!m) {
    throw new ClawGymError(ErrorCodes.USAGE, `"${raw}" is not a package name`, { hint: 'Use lower-case letters, digits, "-", "." and "_" (optionally @scope/name), e.g. `clawgym new plugin --kind task reverse-words`.' });
  }
  const [, scope, rest] = m;
  const name = rest!.replace(/^clawgym-plugin-/, '');
  const unscoped = `clawgym-plugin-${name}`;
  const id = name.replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase()).replace(/^[0-9]/, '_$&');
  return { packageName: scope ? `@${scope}/${unscoped}` : unscoped, name, id };
}

/** The package.json of a new plugin: a build, tests on Node's runner, the provides entry, core as a peer. */
function packageJson(kind: NewPluginKind, packageName: string, name: string, coreVersion: string): string {
  const provides = PROVIDES[kind];
  return `${JSON.stringify({
    name: packageName,
    version: '0.1.0',
    description: `A ClawGym ${kind} plugin`,
    license: 'UNLICENSED',
    keywords: ['clawgym-plugin', `clawgym-${provides ?? 'hooks'}`],
    type: 'commonjs',
    main: 'dist/index.js',
    types: 'dist/index.d.ts',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
    files: ['dist', '!dist/**/*.test.*'],
    scripts: {
      build: 'tsc -p tsconfig.json',
      // `node` here is the Node 24 that @clawgym/core brings (node_modules/.bin comes first on an npm script's PATH).
      test: 'npm run build && node --test --test-reporter=spec "dist/**/*.test.js"',
      prepack: 'npm run build',
    },
    ...(provides ? { clawgym: { provides: { [provides]: [name] } } } : {}),
    peerDependencies: { '@clawgym/core': `^${coreVersion}` },
    devDependencies: { '@clawgym/core': `^${coreVersion}`, '@types/node': '^24.0.0', typescript: '^7.0.2' },
  }, null, 2)}\n`;
}

const TSCONFIG = `${JSON.stringify({
  compilerOptions: {
    target: 'ES2022', module: 'node16', moduleResolution: 'node16', lib: ['ES2023'], types: ['node'],
    strict: true, esModuleInterop: true, skipLibCheck: true, declaration: true, rootDir: 'src', outDir: 'dist',
  },
  include: ['src'],
}, null, 2)}\n`;

const readme = (kind: NewPluginKind, packageName: string, name: string) => `# ${packageName}

A ClawGym ${kind} plugin. \`npm test\` builds it and runs its tests (Node's test runner, with
ClawGym's test kit, \`@clawgym/core/testing\`); \`npm pack\` or \`npm publish\` builds it first.

In a ClawGym project, after \`npm i -D ${packageName}\` (or a path to this folder):

\`\`\`ts
${{
  task: `tasks: ['${name}'],`,
  harness: `harnesses: ['${name}'],`,
  hooks: `plugins: ['${packageName}'],`,
  algorithm: `algorithm: '${name}',`,
  reporter: `reporters: ['${name}', 'tensorboard', 'html'],`,
}[kind]}
\`\`\`

\`npx clawgym plugins\` lists it there.
`;

/** Write a new plugin package of `kind` into `dir` (default: a folder named after the package, in `cwd`). */
export function newPlugin(o: { kind: string; name: string; cwd: string; dir?: string; coreVersion: string }): NewPlugin {
  const kind = o.kind as NewPluginKind;
  if (!NEW_PLUGIN_KINDS.includes(kind)) {
    throw new ClawGymError(ErrorCodes.USAGE, `unknown plugin kind "${o.kind}"`, { hint: `Use one of: ${NEW_PLUGIN_KINDS.join(', ')}.` });
  }
  const { packageName, name, id } = pluginNames(o.name);
  const dir = resolve(o.cwd, o.dir ?? packageName.replace(/^@[^/]+\//, ''));
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new ClawGymError(ErrorCodes.USAGE, `${dir} exists and is not empty`, { hint: 'Pick another name or --dir, or remove the folder.' });
  }
  const sources = pluginSources(kind, { name, id });
  const files: Record<string, string> = {
    'package.json': packageJson(kind, packageName, name, o.coreVersion),
    'tsconfig.json': TSCONFIG,
    '.gitignore': 'node_modules\ndist\n',
    'README.md': readme(kind, packageName, name),
    'src/index.ts': sources.index,
    'src/index.test.ts': sources.test,
  };
  mkdirSync(join(dir, 'src'), { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return { dir, packageName, name, files: Object.keys(files) };
}
