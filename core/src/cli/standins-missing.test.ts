import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * The stand-ins (`clawgym trainer serve`, `clawgym engine serve`) are a package of their own,
 * `@clawgym/standins`, which core's CLI resolves from the project or beside core, as it does
 * @clawgym/model-hf. In a project where core is installed without it, each command says which
 * package it needs and the line that installs it. The project here holds a copy of the built core
 * (so nothing resolves from the workspace through it) and core's dependencies, without @clawgym/*.
 */
const repo = resolve(__dirname, '../../..');
const project = mkdtempSync(join(tmpdir(), 'clawgym-no-standins-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

beforeAll(() => {
  const modules = join(project, 'node_modules');
  const core = join(modules, '@clawgym', 'core');
  mkdirSync(core, { recursive: true });
  for (const part of ['bin', 'dist', 'package.json']) cpSync(join(repo, 'core', part), join(core, part), { recursive: true });
  for (const entry of readdirSync(join(repo, 'node_modules'))) {
    if (entry !== '@clawgym' && entry !== '.bin') symlinkSync(join(repo, 'node_modules', entry), join(modules, entry));
  }
});

describe('the stand-in commands without @clawgym/standins', () => {
  it.each([['trainer'], ['engine']])('`clawgym %s serve` names the package and its install line', (kind) => {
    const r = spawnSync(process.execPath, [join(project, 'node_modules', '@clawgym', 'core', 'bin', 'clawgym.js'), kind, 'serve', '--port', '0'], { cwd: project, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`clawgym ${kind} serve needs the package @clawgym/standins, which is not installed here`);
    expect(r.stderr).toContain('npm i -D @clawgym/standins');
  });
});
