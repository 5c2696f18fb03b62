import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main } from './main';
import { removeTempProjects, tempProject } from '../testing';

const repo = resolve(__dirname, '../../..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');
const fixtures = join(repo, 'core', 'src', 'config', '__fixtures__');

async function cli(argv: string[], cwd = repo) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; }, cwd });
  return { code, out, err };
}

afterAll(removeTempProjects);

/** A config with a misspelled key, in a project folder that resolves @clawgym/core. */
function misspelledConfig(): string {
  const dir = tempProject({ 'clawgym.config.ts': "import { defineConfig } from '@clawgym/core';\nexport default defineConfig({ run: { stpes: 3 } } as never);\n" }, 'clawgym-cli-');
  return join(dir, 'clawgym.config.ts');
}

describe('clawgym CLI (in process)', () => {
  it('prints help with every subcommand and exits 0', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const sub of ['run', 'eval', 'serve', 'plugins', 'inspect', 'report']) expect(r.out).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
  });

  it('refuses an unknown command as a usage error, also with --help', async () => {
    for (const argv of [['nope'], ['nope', '--help']]) {
      const r = await cli(argv);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain("unknown command 'nope'");
    }
  });

  it('gives each subcommand a --help with --config', async () => {
    for (const sub of ['run', 'eval', 'serve', 'plugins', 'inspect', 'report']) {
      const r = await cli([sub, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain('--config <file>');
    }
  });

  it('exits 2 on usage errors', async () => {
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['run', '--no-such-flag'])).code).toBe(2);
    expect((await cli(['inspect'])).code).toBe(2); // missing <run>
    expect((await cli([])).code).toBe(2);
  });

  it('lists the six design-card plugins with their kinds', async () => {
    const r = await cli(['plugins', '--json']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.out) as { kind: string; name: string; packageName: string; version: string }[];
    const pairs = rows.map((x) => `${x.kind} ${x.name} ${x.packageName}`);
    expect(pairs).toEqual(expect.arrayContaining([
      'harness openclaw @clawgym/harness-openclaw',
      'harness claude-code @clawgym/harness-claude-code',
      'taskSuite jobbench @clawgym/task-jobbench',
      'taskSuite officeqa @clawgym/task-officeqa',
      'algorithm ppo @clawgym/algo-ppo',
      'algorithm grpo @clawgym/algo-grpo',
    ]));
    expect(rows.every((x) => x.version === '0.1.0')).toBe(true);
  });

  it('says what is wrong when a command is pointed at something that is not a run, exits 1', async () => {
    const r = await cli(['report', 'no/such/run']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no metrics in');
    expect(r.err).toContain('hint: Pass a run directory made by clawgym run');
    expect(existsSync(join(repo, 'no', 'such', 'run', 'report.html'))).toBe(false);
  });

  it('reports a misspelled config key with the suggestion, no stack trace, exit 1', async () => {
    const r = await cli(['run', '--config', misspelledConfig()]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('run.stpes: unknown key. Did you mean "run.steps"?');
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});

describe('clawgym CLI (built, as a user runs it)', () => {
  const run = (args: string[], cwd = repo) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });

  it('loads a .ts config importing relative .ts modules', () => {
    const r = run(['plugins', '--config', join(fixtures, 'ts-relative', 'clawgym.config.ts')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^harness\s+echo-harness\s+-\s+\(config\)$/m);
  });

  it('exits 1 on a misspelled key with a short message and no stack', () => {
    const r = run(['run', '--config', misspelledConfig()]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Did you mean "run.steps"?');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr.split('\n').length).toBeLessThan(6);
  });

  it('prints the version', () => {
    expect(run(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('runs from core/dist/cli/main.js, which the `clawgym` npm script points at', () => {
    const direct = spawnSync(process.execPath, [join(repo, 'core', 'dist', 'cli', 'main.js'), '--help'], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
    expect(direct.status).toBe(0);
    expect(direct.stdout).toMatch(/^Usage: clawgym /m);
    const script = spawnSync('npm', ['run', '--silent', 'clawgym', '--', '--help'], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
    expect(script.status).toBe(0);
    expect(script.stdout).toMatch(/^Usage: clawgym /m);
  });

  it('hands an older Node over to the project\'s Node 24 before loading anything, and refuses where there is none', () => {
    // The launcher reads process.versions.node; a preload stands in for an older Node binary.
    const as = (version: string, launcher: string, args: string[]) => spawnSync(process.execPath,
      ['-e', `Object.defineProperty(process.versions, 'node', { value: '${version}' }); process.argv.splice(1, 1, ${JSON.stringify(launcher)}); require(${JSON.stringify(launcher)})`, launcher, ...args],
      { cwd: repo, encoding: 'utf8', timeout: 60_000 });
    // Node 20 (Debian 12's) and 18 run the CLI on node_modules' Node 24: the doctor's node row says which Node ran it.
    for (const version of ['20.20.2', '18.19.0']) {
      const handed = as(version, bin, ['doctor', '--json']);
      expect(handed.stderr).not.toMatch(/error: ClawGym needs Node/);
      const node = (JSON.parse(handed.stdout) as { what: string; detail: string }[]).find((r) => r.what === 'node')!;
      expect(node.detail).toMatch(/^Node 2[2-9]\./);
    }
    // A launcher outside any project with Node 24 in it has nothing to hand over to.
    const alone = mkdtempSync(join(tmpdir(), 'clawgym-launcher-'));
    try {
      copyFileSync(bin, join(alone, 'clawgym.js'));
      const old = spawnSync(process.execPath, ['-e', `Object.defineProperty(process.versions, 'node', { value: '20.20.2' }); require(${JSON.stringify(join(alone, 'clawgym.js'))})`],
        { cwd: alone, encoding: 'utf8', timeout: 60_000 });
      expect(old.status).toBe(2);
      expect(old.stderr).toMatch(/^error: ClawGym needs Node 22 or 24 \(this is Node 20\.20\.2\)/);
      expect(old.stderr).toMatch(/run `npm install` in the project \(@clawgym\/core depends on npm.s node@24 package/);
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
    for (const v of ['22.12.0', '24.1.0']) expect(as(v, bin, ['--help']).stderr).toBe('');
  });

  it('ends quietly when its reader closes the pipe', async () => {
    // The reader goes away before the CLI writes: every write then fails with EPIPE.
    const child = spawn(process.execPath, [bin, 'plugins'], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d; });
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
