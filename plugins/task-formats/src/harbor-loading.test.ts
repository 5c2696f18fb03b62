/**
 * Loading many Harbor tasks: a broken task.toml among good tasks, images per content hash,
 * [environment] resources as sandbox limits, compose files refused, split options.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestKernel } from '@clawgym/core/testing';
import taskFormats, { bashOracle, contentHash, harbor, loadHarbor, loadHarborFolder } from './index';

const FIX = join(__dirname, '__fixtures__', 'harbor');
const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A copy of the fixture folder, plus `extra` tasks made by `make(dir)`. */
function folder(extra: Record<string, (dir: string) => void> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'harbor-load-'));
  dirs.push(root);
  cpSync(FIX, root, { recursive: true });
  for (const [name, make] of Object.entries(extra)) {
    cpSync(join(FIX, 'sum-csv'), join(root, name), { recursive: true });
    make(join(root, name));
  }
  return root;
}

describe('a folder with broken Harbor tasks', () => {
  it('loads the good tasks and reports the broken one with its file, line, column and the TOML pointer', async () => {
    const root = folder({ 'broken-toml': (d) => writeFileSync(join(d, 'task.toml'), 'version = "1.0"\n[metadata\ndifficulty = "easy"\n') });
    const logs: string[] = [];
    const tasks = await loadHarbor(root, { log: (m) => logs.push(m) });
    expect(tasks.map((t) => t.id)).toEqual(['fix-greeting', 'sum-csv']);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('1 of 3 Harbor task(s)');
    expect(logs[0]).toContain(`${join(root, 'broken-toml', 'task.toml')}:2:10`);
    expect(logs[0]).toMatch(/2: {2}\[metadata\n\s+\^/); // smol-toml's code frame survives

    const { problems } = await loadHarborFolder(root);
    expect(problems).toEqual([{ dir: join(root, 'broken-toml'), where: `${join(root, 'broken-toml', 'task.toml')}:2:10`, message: expect.stringContaining('not valid TOML') }]);
  });

  it('with strict: true the broken task is an error', async () => {
    const root = folder({ 'broken-toml': (d) => writeFileSync(join(d, 'task.toml'), '[agent]\ntimeout_sec = = 3\n') });
    await expect(loadHarbor(root, { strict: true })).rejects.toMatchObject({ code: 'CLAWGYM_TASK_INVALID', message: expect.stringMatching(/broken-toml\/task\.toml:2:\d+: not valid TOML/) });
  });

  it('a task without tests/test.sh, or with a bad [environment] memory, is reported too; when none loads the error lists each', async () => {
    const root = mkdtempSync(join(tmpdir(), 'harbor-none-'));
    dirs.push(root);
    cpSync(join(FIX, 'sum-csv'), join(root, 'no-tests'), { recursive: true });
    rmSync(join(root, 'no-tests', 'tests'), { recursive: true });
    cpSync(join(FIX, 'sum-csv'), join(root, 'bad-memory'), { recursive: true });
    writeFileSync(join(root, 'bad-memory', 'task.toml'), '[environment]\nmemory = "lots"\n');
    const err = await loadHarbor(root).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'CLAWGYM_TASK_INVALID' });
    expect((err as Error).message).toContain('no Harbor task');
    expect((err as Error).message).toContain('has no tests/test.sh');
    expect((err as Error).message).toContain('[environment] memory is "lots": expected a size such as "2G"');
  });

  it('a docker-compose environment is refused with the reason, not run without its services', async () => {
    const root = folder({ compose: (d) => writeFileSync(join(d, 'environment', 'docker-compose.yaml'), 'services:\n  main:\n    build: .\n') });
    const { tasks, problems } = await loadHarborFolder(root);
    expect(tasks.map((t) => t.id)).not.toContain('compose');
    expect(problems[0]!.message).toContain('docker-compose environments are not supported');
    // Copying the files needs no image, so the compose file is no obstacle there.
    expect((await loadHarbor(root, { environment: 'copy' })).map((t) => t.id)).toContain('compose');
  });
});

describe("a Harbor task's image", () => {
  it('is described by its build context and content hash; [environment] resources become the task\'s sandbox limits', async () => {
    const [greet, sum] = await loadHarbor(FIX);
    expect(greet!.environment).toEqual({
      contextDir: join(FIX, 'fix-greeting', 'environment'), dockerfile: 'Dockerfile', hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      buildTimeoutMs: 300_000, source: expect.stringContaining('fix-greeting'),
    });
    expect(greet!.limits).toEqual({ cpus: 1, memoryMb: 512 });
    // No Dockerfile: no image needed, the files are copied as before.
    expect(sum!.environment).toBeUndefined();
    expect(sum!.limits).toBeUndefined();
  });

  it('the content hash changes with any file of the build context, and only then', async () => {
    const root = folder();
    const env = join(root, 'fix-greeting', 'environment');
    const before = await contentHash(env);
    expect(await contentHash(env)).toBe(before);
    writeFileSync(join(env, 'greet.sh'), '#!/bin/bash\necho "Hi $1"\n');
    expect(await contentHash(env)).not.toBe(before);
  });

  it('the older memory = "2G" spelling is read as megabytes', async () => {
    const root = folder({ 'old-memory': (d) => writeFileSync(join(d, 'task.toml'), '[environment]\ncpus = 2\nmemory = "2G"\n') });
    const task = (await loadHarbor(root)).find((t) => t.id === 'old-memory')!;
    expect(task.limits).toEqual({ cpus: 2, memoryMb: 2048 });
  });
});

describe('solve.sh is run by bash', () => {
  it('through a tool call whose shell is sh (dash), with bash syntax, its own here-documents and stdin left alone', () => {
    const script = '#!/bin/bash\nx=(a b)\n[[ ${x[1]} == b ]] && echo "two: ${#x[@]}"\ncat <<\'CLAWGYM_SOLVE\'\nliteral $HOME\nCLAWGYM_SOLVE\nread -r line; echo "stdin: $line"\n';
    const command = String(bashOracle(script)[0]!.toolCalls[0]!.arguments.command);
    const r = spawnSync('/bin/sh', ['-c', command], { input: 'from the tool\n', encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('two: 2\nliteral $HOME\nstdin: from the tool\n');
    // The same script straight under sh fails: this is what the wrapping is for.
    expect(spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8' }).stdout).not.toContain('two: 2');
  });
});

describe('split options', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `task-${i}`);
  const root = mkdtempSync(join(tmpdir(), 'harbor-split-'));
  dirs.push(root);
  beforeAll(() => { for (const id of ids) cpSync(join(FIX, 'sum-csv'), join(root, id), { recursive: true }); });

  const testIds = async (o: Parameters<typeof harbor>[1]) => (await harbor(root, o).tasks('test', { seed: 0 })).map((t) => t.id).sort();

  it('testFraction sets the share, splitSeed draws another test set of that share, testIds lists it', async () => {
    const a = await testIds({ testFraction: 0.3 });
    const b = await testIds({ testFraction: 0.3, splitSeed: 7 });
    expect(a.length).toBeGreaterThan(40);
    expect(a.length).toBeLessThan(80);
    expect(Math.abs(b.length - a.length)).toBeLessThan(25);
    expect(b).not.toEqual(a);
    expect(await testIds({ testFraction: 0.3, splitSeed: 7 })).toEqual(b); // stable
    expect(await testIds({ testIds: ['task-3', 'task-5'], testFraction: 0.9 })).toEqual(['task-3', 'task-5']);
    const train = (await harbor(root, { testFraction: 0.3, splitSeed: 7 }).tasks('train', { seed: 0 })).map((t) => t.id);
    expect(train.length + b.length).toBe(200);
    expect(train.filter((id) => b.includes(id))).toEqual([]);
  });

  it('are accepted per folder by the plugin, beside plain folder names', async () => {
    const kernel = await createTestKernel({ plugins: [taskFormats({ harbor: [{ dir: root, name: 'mine', testIds: ['task-1'], environment: 'copy', strict: true }, FIX] })] });
    expect((await kernel.registry.get('taskSuite', 'mine').tasks('test', { seed: 0 })).map((t) => t.id)).toEqual(['task-1']);
    expect(kernel.registry.has('taskSuite', 'harbor:harbor')).toBe(true);
    expect(() => taskFormats({ harbor: [{ dir: root, testFraction: 2 }] })).toThrow(/harbor\[0\]\.testFraction/);
  });
});
