#!/usr/bin/env node
'use strict';
/**
 * `npm run release -- [<version>] --registry <url> [--dry-run] [--tag <tag>]`: every package of
 * the repository (core, plugins/*, create-clawgym) at one version, built and published with
 * `npm publish --workspaces`. With <version>, first sets it everywhere: each package.json, the
 * `@clawgym/*` ranges between them and the core range each plugin declares in its source
 * (`core: '^x.y.z'`). The registry is always named: nothing here defaults to the public one.
 * docs/releasing.md says why one version for all.
 */
const { execFileSync } = require('node:child_process');
const { readdirSync, readFileSync, writeFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');

const repo = join(__dirname, '..');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** The workspace folders, as the root package.json lists them (`plugins/*` expanded). */
function workspaces() {
  return readJson(join(repo, 'package.json')).workspaces.flatMap((w) => (w.endsWith('/*')
    ? readdirSync(join(repo, w.slice(0, -2))).map((d) => `${w.slice(0, -2)}/${d}`).filter((d) => existsSync(join(repo, d, 'package.json')))
    : [w]));
}

/** Set `version` on every package and on the ranges between them. */
function bump(version) {
  const dirs = workspaces();
  const names = new Set(dirs.map((d) => readJson(join(repo, d, 'package.json')).name));
  const old = readJson(join(repo, 'core', 'package.json')).version;
  for (const file of [join(repo, 'package.json'), ...dirs.map((d) => join(repo, d, 'package.json'))]) {
    const pkg = readJson(file);
    pkg.version = version;
    for (const field of ['dependencies', 'peerDependencies', 'devDependencies']) {
      for (const dep of Object.keys(pkg[field] ?? {})) if (names.has(dep)) pkg[field][dep] = `^${version}`;
    }
    writeJson(file, pkg);
  }
  for (const d of dirs.filter((x) => x.startsWith('plugins/'))) {
    const index = join(repo, d, 'src', 'index.ts');
    if (!existsSync(index)) continue;
    const text = readFileSync(index, 'utf8');
    writeFileSync(index, text.split(`core: '^${old}'`).join(`core: '^${version}'`));
  }
  return dirs;
}

function main(argv) {
  const flag = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
  const registry = flag('--registry');
  const tag = flag('--tag');
  const dryRun = argv.includes('--dry-run');
  const version = argv.find((a, i) => !a.startsWith('-') && !['--registry', '--tag'].includes(argv[i - 1]));
  if (!registry) {
    process.stderr.write('error: name the registry to publish to: --registry <url>\n  hint: npm run release -- 0.2.0 --registry https://registry.npmjs.org/ (the public one), or a local Verdaccio for a try\n');
    return 2;
  }
  if (version && !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    process.stderr.write(`error: "${version}" is not a version (x.y.z)\n`);
    return 2;
  }
  const dirs = version ? bump(version) : workspaces();
  const run = (cmd, args) => execFileSync(cmd, args, { cwd: repo, stdio: 'inherit' });
  run('npm', ['run', 'build']);
  run('npm', ['publish', '--workspaces', '--registry', registry, ...(tag ? ['--tag', tag] : []), ...(dryRun ? ['--dry-run'] : [])]);
  process.stdout.write(`published ${dirs.length} packages at ${readJson(join(repo, 'core', 'package.json')).version} to ${registry}${dryRun ? ' (dry run)' : ''}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
