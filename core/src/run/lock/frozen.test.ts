import 'reflect-metadata';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../../config/load';
import type { Harness } from '../../contracts/harness';
import type { RunLock } from '../../contracts/lock';
import type { PluginApi } from '../../contracts/plugin';
import type { Trainer } from '../../contracts/trainer';
import { ErrorCodes } from '../../errors';
import { createKernel } from '../create-kernel';
import { train } from '../train';
import { removeTempProjects, tempProject } from '../../testing';
import { collectLock } from './collect';
import { LOCK_FILE } from '../../report/lock-diff';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '../../../..');

/** A CLI as npm installs one: its package in node_modules, its integrity in the install's package-lock.json. */
function installCli(dir: string, version: string, integrity: string): string {
  const pkg = join(dir, 'tools', 'node_modules', 'fake-cli');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'fake-cli', version, bin: { fake: 'cli.js' } }));
  writeFileSync(join(pkg, 'cli.js'), `#!/usr/bin/env node\nconsole.log('fake ${version}');\n`, { mode: 0o755 });
  writeFileSync(join(dir, 'tools', 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/fake-cli': { version, resolved: `https://registry.npmjs.org/fake-cli/-/fake-cli-${version}.tgz`, integrity } } }));
  return join(pkg, 'cli.js');
}

/**
 * A project whose run uses everything a lock covers: a harness CLI installed by npm (by `bin`),
 * a model folder with a tokenizer and chat template (the trainer's `tokenizer` option), a local
 * sandbox on a root filesystem folder, and a Harbor task folder (tasks, verifiers) from
 * @clawgym/task-formats.
 */
function project() {
  const dir = tempProject({}, 'clawgym-lock-');
  const bin = installCli(dir, '1.0.0', 'sha512-AAAAversion1');
  mkdirSync(join(dir, 'model'));
  writeFileSync(join(dir, 'model', 'tokenizer.json'), '{"model":{"type":"BPE"}}');
  writeFileSync(join(dir, 'model', 'tokenizer_config.json'), JSON.stringify({ chat_template: '{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}' }));
  mkdirSync(join(dir, 'rootfs', 'usr', 'bin'), { recursive: true });
  writeFileSync(join(dir, 'rootfs', 'usr', 'bin', 'python3'), 'python 3.11', { mode: 0o755 });
  cpSync(join(repo, 'plugins', 'task-formats', 'src', '__fixtures__', 'harbor'), join(dir, 'tasks'), { recursive: true });
  const harness: Harness = {
    name: 'fakecli', wireFormat: 'openai-chat', cliPackage: 'fake-cli', check: async () => ({ ok: true }),
    run: async () => ({ exitCode: 0, timedOut: false, logTail: '' }),
  };
  const plugin = {
    name: 'acme:lock-fixture',
    apply(api: PluginApi) {
      api.provide.harness(harness);
      api.provide.trainer({
        name: 'recorder',
        async create(): Promise<Trainer> {
          return {
            name: 'recorder', policyVersion: () => 0,
            async step() { return { loss: 0, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
            async save(d) { mkdirSync(d, { recursive: true }); }, load: async () => {},
          };
        },
      });
    },
  };
  const config = (run: Record<string, unknown> = {}) => resolveConfig({
    name: 'locked', plugins: [plugin, ['@clawgym/task-formats', { harbor: [{ dir: join(dir, 'tasks'), environment: 'copy' }] }]],
    engine: 'scripted', trainer: { use: 'recorder', options: { tokenizer: 'model' } },
    sandbox: { use: 'local', options: { rootfs: join(dir, 'rootfs') } }, harnesses: [{ use: 'fakecli', options: { bin } }],
    tasks: ['harbor:tasks'], reporters: [], run: { steps: 1, tasksPerStep: 1, groupSize: 1, concurrency: 1, evalEvery: 0, evalTasks: 1, ...run },
  }, { rootDir: dir });
  return { dir, bin, config };
}

const quiet = { info: () => undefined, warn: () => undefined };

/** `clawgym lock` on the project's config: the lock a later frozen run is held to. */
async function lockOf(config: ReturnType<ReturnType<typeof project>['config']>): Promise<RunLock> {
  const kernel = await createKernel(config, { logger: quiet });
  try { return await collectLock(config, kernel); } finally { await kernel.dispose(); }
}

/** A frozen run's refusal (its message), or undefined when it started. An aborted signal stops a run that starts before its first rollout. */
async function frozenRun(config: ReturnType<ReturnType<typeof project>['config']>, lock: RunLock, name: string, resume = false): Promise<string | undefined> {
  const stop = new AbortController();
  stop.abort();
  try {
    await train({ config, name, resume, frozen: { lock, file: 'clawgym.lock.json' }, signal: stop.signal, logger: quiet });
    return undefined;
  } catch (err) {
    expect((err as { code?: string }).code).toBe(ErrorCodes.LOCK_MISMATCH);
    return (err as Error).message;
  }
}

describe('clawgym run --frozen', () => {
  it('starts when nothing changed, and writes its own lock into the run folder', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    expect(lock.harnesses.fakecli!.cli).toMatchObject({ package: 'fake-cli', version: '1.0.0', integrity: 'sha512-AAAAversion1' });
    expect(Object.keys(lock.model['trainer.tokenizer']!).sort()).toEqual(['tokenizer.json', 'tokenizer_config.json']);
    expect(lock.sandbox).toMatchObject({ name: 'local', provider: '@clawgym/core@0.1.0', kind: 'rootfs', ref: join(p.dir, 'rootfs') });
    expect(lock.tasks['harbor:tasks']).toMatchObject({ provider: expect.stringMatching(/^@clawgym\/task-formats@/), train: 1, test: 1, sources: { [join(p.dir, 'tasks')]: expect.stringMatching(/^sha256:/) } });
    expect(lock.packages).toMatchObject({ '@clawgym/core': expect.any(String), '@clawgym/task-formats': expect.any(String), '(config) acme:lock-fixture': 'in the config file' });

    expect(await frozenRun(p.config(), lock, 'same')).toBeUndefined();
    const written = JSON.parse(readFileSync(join(p.dir, 'runs', 'same', LOCK_FILE), 'utf8')) as RunLock;
    expect({ ...written, createdAt: '' }).toEqual({ ...lock, createdAt: '' });
  }, 60_000);

  it('refuses after the harness CLI was upgraded, naming its version and integrity', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    installCli(p.dir, '1.1.0', 'sha512-BBBBversion2');
    const message = await frozenRun(p.config(), lock, 'upgraded');
    expect(message).toContain('harnesses.fakecli.cli.version: "1.0.0" → "1.1.0"');
    expect(message).toContain('harnesses.fakecli.cli.integrity: "sha512-AAAAversion1" → "sha512-BBBBversion2"');
    expect(existsSync(join(p.dir, 'runs', 'upgraded', 'state.json'))).toBe(false);
  }, 60_000);

  it('refuses after the chat template file changed, naming the file', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    writeFileSync(join(p.dir, 'model', 'tokenizer_config.json'), JSON.stringify({ chat_template: '{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{% endfor %}' }));
    const message = await frozenRun(p.config(), lock, 'template');
    expect(message).toMatch(/in 1 place:\n {2}model\.trainer\.tokenizer\.tokenizer_config\.json: [0-9a-f]{12} → [0-9a-f]{12}$/);
  }, 60_000);

  it('refuses after a task\'s verifier changed, naming the suite', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    const test = join(p.dir, 'tasks', 'sum-csv', 'tests', 'test.sh');
    writeFileSync(test, readFileSync(test, 'utf8').replace(/\n$/, '\n# accept any total\n'));
    const message = await frozenRun(p.config(), lock, 'verifier');
    expect(message).toContain(`tasks.harbor:tasks.sources.${join(p.dir, 'tasks')}: `);
    expect(message).toMatch(/in 1 place/);
  }, 60_000);

  it('refuses after the sandbox\'s root filesystem was rebuilt differently, and not after it was rebuilt the same', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    // The same content written again (new modification times) is the same image.
    writeFileSync(join(p.dir, 'rootfs', 'usr', 'bin', 'python3'), 'python 3.11', { mode: 0o755 });
    expect(await frozenRun(p.config(), lock, 'rebuilt-same')).toBeUndefined();
    writeFileSync(join(p.dir, 'rootfs', 'usr', 'bin', 'python3'), 'python 3.12', { mode: 0o755 });
    const message = await frozenRun(p.config(), lock, 'rebuilt');
    expect(message).toMatch(/in 1 place:\n {2}sandbox\.digest: [0-9a-f]{12} → [0-9a-f]{12}$/);
  }, 60_000);

  it('refuses a changed config by its hash', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    expect(await frozenRun(p.config({ groupSize: 2 }), lock, 'config')).toMatch(/in 1 place:\n {2}config: [0-9a-f]{12} → [0-9a-f]{12}$/);
  }, 60_000);

  it('checks a resume too: a CLI upgraded since the run started is refused, even after the lock beside the config was written again', async () => {
    const p = project();
    const lock = await lockOf(p.config());
    expect(await frozenRun(p.config(), lock, 'resumed')).toBeUndefined();
    installCli(p.dir, '1.1.0', 'sha512-BBBBversion2');
    // Against the lock beside the config, as at the start.
    expect(await frozenRun(p.config(), lock, 'resumed', true)).toContain('harnesses.fakecli.cli.version: "1.0.0" → "1.1.0"');
    // `clawgym lock` again locks the new CLI; the run still started with the old one, and its own lock says so.
    const relocked = await lockOf(p.config());
    const message = await frozenRun(p.config(), relocked, 'resumed', true);
    expect(message).toContain(`differs from the run's own lock (${join(p.dir, 'runs', 'resumed', LOCK_FILE)}) in 3 places:`);
    expect(message).toContain('harnesses.fakecli.cli.version: "1.0.0" → "1.1.0"');
    // The run's own lock is kept as it started: a refused resume writes nothing over it.
    expect((JSON.parse(readFileSync(join(p.dir, 'runs', 'resumed', LOCK_FILE), 'utf8')) as RunLock).harnesses.fakecli!.cli!.version).toBe('1.0.0');
    // With the locked CLI put back, the resume goes on (a longer run, `--steps`, is not a difference from its own lock).
    installCli(p.dir, '1.0.0', 'sha512-AAAAversion1');
    expect(await frozenRun(p.config(), lock, 'resumed', true)).toBeUndefined();
    const longer = p.config({ steps: 2 });
    expect(await frozenRun(longer, await lockOf(longer), 'resumed', true)).toBeUndefined();
  }, 60_000);
});
