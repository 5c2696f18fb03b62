import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, resolveConfig } from '../../config/load';
import { frozenConfig } from '../../run/frozen-config';
import { train } from '../../run/train';
import { removeTempProjects, tempProject } from '../../testing';
import { main } from '../main';

const repo = resolve(__dirname, '../../../..');
const made: string[] = [];
afterAll(() => { removeTempProjects(); for (const d of made) rmSync(d, { recursive: true, force: true }); });

async function cli(argv: string[], cwd: string) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; }, cwd });
  return { code, out, err };
}

/** A project with a config file: the scripted engine, a trainer that records nothing, agentloop, built-in tasks. */
function project(groupSize: number): string {
  const dir = tempProject({}, 'clawgym-lock-cli-');
  writeConfig(dir, groupSize);
  return dir;
}

function writeConfig(dir: string, groupSize: number): void {
  writeFileSync(join(dir, 'clawgym.config.mjs'), `import { mkdirSync } from 'node:fs';
const recorder = { name: 'acme:recorder', apply(api) { api.provide.trainer({ name: 'recorder', async create() { return {
  name: 'recorder', policyVersion: () => 0, async step() { return { loss: 0, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
  async save(d) { mkdirSync(d, { recursive: true }); }, async load() {} }; } }); } };
export default { name: 'cli-lock', plugins: [recorder], engine: 'scripted', trainer: 'recorder', harnesses: ['agentloop'],
  tasks: [{ use: 'builtin', options: { families: ['write'] } }], reporters: [],
  run: { steps: 1, tasksPerStep: 1, groupSize: ${groupSize}, concurrency: 1, evalEvery: 0, evalTasks: 1 } };
`);
}

describe('clawgym lock and clawgym run --frozen', () => {
  it('refuses a frozen run without a lock, writes the lock beside the config, and refuses a frozen run of a changed config naming the difference', async () => {
    const dir = project(2);
    const none = await cli(['run', '--frozen'], dir);
    expect(none.code).toBe(1);
    expect(none.err).toContain(`the config has no lock (${join(dir, 'clawgym.lock.json')} does not exist)`);

    const locked = await cli(['lock'], dir);
    expect(locked.code).toBe(0);
    expect(locked.out).toMatch(/^harness {6}agentloop: no separate CLI \(from @clawgym\/harness-agentloop@/m);
    expect(locked.out).toContain(`wrote ${join(dir, 'clawgym.lock.json')}`);
    const lock = JSON.parse(readFileSync(join(dir, 'clawgym.lock.json'), 'utf8'));
    expect(Object.keys(lock.tasks)).toEqual(['builtin']);

    writeConfig(dir, 3);
    const refused = await cli(['run', '--frozen'], dir);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/what this run would use differs from .*clawgym\.lock\.json in 1 place:\n {2}config: [0-9a-f]{12} → [0-9a-f]{12}\n/);
    expect(refused.err).toContain('run `clawgym lock` to lock it');

    const again = await cli(['lock'], dir);
    expect(again.out).toMatch(/changed from the lock that was there:\n {2}config: /);

    // A frozen run of the locked config trains; its frozen resume is checked the same way.
    expect((await cli(['run', '--frozen'], dir)).code).toBe(0);
    writeConfig(dir, 2);
    const resumed = await cli(['run', '--resume', '--frozen', '--steps', '2'], dir);
    expect(resumed.code).toBe(1);
    expect(resumed.err).toMatch(/differs from .*clawgym\.lock\.json in 1 place:\n {2}config: [0-9a-f]{12} → [0-9a-f]{12}\n/);
  }, 120_000);
});

describe('clawgym diff', () => {
  it('names the one option that differs between two runs of the default config, and nothing else', async () => {
    const out = mkdtempSync(join(tmpdir(), 'clawgym-diff-'));
    made.push(out);
    // The default config (./clawgym.config.ts), its runs in a folder of their own; run b with one option changed.
    const { rootDir: _r, configFile: _f, ...plain } = frozenConfig(loadConfig({ cwd: repo })) as Record<string, unknown> & { run: Record<string, unknown> };
    const config = (groupSize: number) => resolveConfig({ ...plain, run: { ...plain.run, outDir: out, groupSize } }, { rootDir: repo, configFile: join(repo, 'clawgym.config.ts') });
    const quiet = { info: () => undefined, warn: () => undefined };
    // Each run starts (writes its config and lock) and stops before its first rollout.
    for (const [name, groupSize] of [['a', 8], ['b', 4]] as const) {
      const stop = new AbortController();
      stop.abort();
      await train({ config: config(groupSize), name, signal: stop.signal, logger: quiet });
    }
    const r = await cli(['diff', join(out, 'a'), join(out, 'b')], repo);
    expect(r.code).toBe(0);
    expect(r.out).toBe('config run.groupSize: 8 → 4\n');
    const same = await cli(['diff', join(out, 'a'), join(out, 'a')], repo);
    expect(same.out).toContain('ran the same config with the same lock');
  }, 120_000);
});

describe('clawgym eval', () => {
  it('writes its own lock into its folder, as a run does: the config\'s, with the harnesses it evaluated through', async () => {
    const dir = project(1);
    expect((await cli(['lock'], dir)).code).toBe(0);
    const locked = JSON.parse(readFileSync(join(dir, 'clawgym.lock.json'), 'utf8'));
    const evaluated = await cli(['eval', '--name', 'e1', '--limit', '1'], dir);
    expect(evaluated.code).toBe(0);
    const own = JSON.parse(readFileSync(join(dir, 'runs', 'e1', 'clawgym.lock.json'), 'utf8'));
    expect({ ...own, createdAt: '' }).toEqual({ ...locked, createdAt: '' });
    // `--harness`: the lock names what was evaluated (a config with that harness), not the config file's.
    const other = await cli(['eval', '--name', 'e2', '--limit', '1', '--harness', 'agentloop', '--engine', 'oracle'], dir);
    expect(other.code).toBe(0);
    const scoped = JSON.parse(readFileSync(join(dir, 'runs', 'e2', 'clawgym.lock.json'), 'utf8'));
    expect(Object.keys(scoped.harnesses)).toEqual(['agentloop']);
    expect(scoped.tasks).toEqual(locked.tasks);
  }, 120_000);
});
