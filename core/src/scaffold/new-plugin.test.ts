import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { main } from '../cli/main';
import { NEW_PLUGIN_KINDS, pluginNames } from './new-plugin';

// Made inside the repository (an ignored folder), so `@clawgym/core` and `tsc` resolve to the
// workspace's, as they resolve to the installed ones in a package of one's own.
const repo = resolve(__dirname, '..', '..', '..');
const cache = join(repo, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const root = mkdtempSync(join(cache, 'clawgym-new-plugin-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const cli = async (args: string[]) => {
  let out = '';
  let err = '';
  const code = await main(args, { out: (s) => { out += s; }, err: (s) => { err += s; }, cwd: root });
  return { code, out, err };
};

describe('clawgym new plugin', () => {
  it.each(NEW_PLUGIN_KINDS)('makes a plugin of kind %s that builds and passes its own kit tests as made, with the provides entry it needs', async (kind) => {
    const made = await cli(['new', 'plugin', '--kind', kind, `my-${kind}`]);
    expect(made).toMatchObject({ code: 0, err: '' });
    const dir = join(root, `clawgym-plugin-my-${kind}`);
    expect(made.out).toContain(`Made clawgym-plugin-my-${kind} (a ${kind} plugin providing "my-${kind}")`);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { keywords: string[]; clawgym?: { provides: Record<string, string[]> }; peerDependencies: Record<string, string> };
    expect(pkg.keywords).toContain('clawgym-plugin');
    const provides = { task: { taskSuite: ['my-task'] }, harness: { harness: ['my-harness'] }, hooks: undefined, algorithm: { algorithm: ['my-algorithm'] }, reporter: { reporter: ['my-reporter'] } }[kind];
    expect(pkg.clawgym?.provides).toEqual(provides);
    expect(pkg.peerDependencies['@clawgym/core']).toMatch(/^\^\d+\.\d+\.\d+$/);
    const build = spawnSync(join(repo, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(build.stdout + build.stderr).toBe('');
    expect(build.status).toBe(0);
    const test = spawnSync(process.execPath, ['--test', '--test-reporter=spec', 'dist/**/*.test.js'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(test.stdout).toMatch(/^ℹ fail 0$/m);
    expect(test.stdout).toMatch(/^ℹ pass [1-9]/m);
    expect(test.status).toBe(0);
  }, 180_000);

  it('names packages as discovery finds them, and refuses a bad kind, a bad name and a folder in use', async () => {
    expect(pluginNames('reverse')).toEqual({ packageName: 'clawgym-plugin-reverse', name: 'reverse', id: 'reverse' });
    expect(pluginNames('@acme/clawgym-plugin-word-count')).toEqual({ packageName: '@acme/clawgym-plugin-word-count', name: 'word-count', id: 'wordCount' });
    expect((await cli(['new', 'plugin', '--kind', 'engine', 'x'])).err).toMatch(/argument 'engine' is invalid\. Allowed choices are task, harness, hooks, algorithm, reporter/);
    const bad = await cli(['new', 'plugin', '--kind', 'task', 'Bad Name']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('"Bad Name" is not a package name');
    mkdirSync(join(root, 'taken', 'src'), { recursive: true });
    const taken = await cli(['new', 'plugin', '--kind', 'task', 'x', '--dir', 'taken']);
    expect(taken.err).toContain(`${join(root, 'taken')} exists and is not empty`);
  });
});
