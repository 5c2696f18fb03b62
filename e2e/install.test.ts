import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// `npm install` of the repository on the machine's Node: what runs is declared, and the output leaves nothing to interpret.
const repo = resolve(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean>; scripts: Record<string, string> };
const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; hasInstallScript?: boolean; link?: boolean }> };

/** Every package of the lockfile with an install script, by name. */
const withScripts = [...new Set(Object.entries(lock.packages)
  .filter(([path, p]) => p.hasInstallScript && path.includes('node_modules/'))
  .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)))].sort();
/** allowScripts keys by package name (`name` or `name@version`). */
const declared = Object.keys(pkg.allowScripts).map((k) => k.replace(/(?<=.)@[^@/]*$/, '')).sort();

describe('npm install of the repository', () => {
  it('declares, for every dependency with an install script, whether it runs (npm 11 allowScripts), and nothing else', () => {
    // Optional ones too (gl, which gpu.js builds against, installs only where it can): the lockfile is the same on every machine.
    expect(withScripts.filter((n) => !declared.includes(n))).toEqual([]);
    expect(declared.filter((n) => !withScripts.includes(n))).toEqual([]);
  });

  it('runs the preinstall of npm\'s node package, which is how Node 24 arrives', () => {
    expect(pkg.allowScripts.node).toBe(true);
  });

  it('ends with one line about the Node npm ran on when it is older than 22, and says nothing on Node 22 or 24', () => {
    const note = (agent: string) => spawnSync(process.execPath, [join(repo, 'scripts', 'install-note.js')], { encoding: 'utf8', env: { ...process.env, npm_config_user_agent: agent } }).stdout;
    expect(pkg.scripts.postinstall).toBe('node scripts/install-note.js');
    expect(note('npm/11.19.1 node/v20.20.2 linux x64 workspaces/false')).toBe('ClawGym: npm ran on Node 20.20.2; the repository\'s commands (npm test, npx clawgym) run on the Node 24 this install put into node_modules/node, so nothing needs doing. (npm\'s "Unsupported engine" warnings for our packages, which need Node >=22, are off in .npmrc; npm install --loglevel=warn shows them.)\n');
    expect(note('npm/11.6.0 node/v24.21.0 linux x64 workspaces/false')).toBe('');
  });
});
