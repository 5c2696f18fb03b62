import 'reflect-metadata';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig } from '../../config/load';
import type { Harness } from '../../contracts/harness';
import type { Trainer } from '../../contracts/trainer';
import type { PluginApi } from '../../contracts/plugin';
import { train } from '../../run/train';
import { createKernel } from '../../run/create-kernel';
import { collectLock } from '../../run/lock/collect';
import type { RunLock } from '../../contracts/lock';
import { netnsAvailable, netnsSandboxProvider } from '../../2-sandbox/netns';
import { describeIf, removeTempProjects, tempProject } from '../../testing';
import type { HarnessFingerprint } from './fingerprint';

afterAll(removeTempProjects);

/**
 * A harness that is a real process making one OpenAI Chat call with the system prompt and tool
 * description it is given by file: the test "upgrades" it between steps by rewriting the file.
 */
function driftyHarness(promptFile: string): Harness {
  const code = `(async () => { const { system, describe } = JSON.parse(require('fs').readFileSync(${JSON.stringify(promptFile)}, 'utf8'));
    const tools = [{ type: 'function', function: { name: 'write_file', description: describe, parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } } }];
    const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
      headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'system', content: system }, { role: 'user', content: 'go' }], tools }) });
    process.exit(r.ok ? 0 : 1); })()`;
  return {
    name: 'drifty', wireFormat: 'openai-chat', check: async () => ({ ok: true }), hostPaths: () => [promptFile],
    version: async () => JSON.parse(readFileSync(promptFile, 'utf8')).version,
    async run(ctx) {
      const r = await ctx.sandbox.exec([process.execPath, '-e', code], { env: { OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey }, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
      return { exitCode: r.exitCode, timedOut: r.timedOut, logTail: `${r.stdout}${r.stderr}` };
    },
  };
}

const ns = netnsAvailable();
describeIf(ns.ok ? undefined : ns.reason, 'clawgym run and a harness whose prompt changes (fingerprint drift alarm)', () => {
  it('pins the harness\'s fingerprint at step 1 and warns at the step its system prompt changed, then when a later run of the config sees another tool schema', async () => {
    const dir = tempProject({}, 'clawgym-fp-run-');
    const promptFile = join(dir, 'prompt.json');
    const write = (system: string, describe: string, version: string) => writeFileSync(promptFile, JSON.stringify({ system, describe, version }));
    write('You are drifty.', 'Write a file.', '1.0.0');
    let steps = 0;
    const plugin = {
      name: 'acme:drifty',
      apply(api: PluginApi) {
        api.provide.harness(driftyHarness(promptFile));
        api.provide.sandbox(netnsSandboxProvider());
        api.provide.trainer({
          name: 'recorder',
          async create(): Promise<Trainer> {
            return {
              name: 'recorder', policyVersion: () => steps,
              // After step 1's update, the CLI is "upgraded": its system prompt changes.
              async step() { if (++steps === 1) write('You are drifty. Be brief.', 'Write a file.', '1.0.0'); return { loss: 0, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
              async save(d) { mkdirSync(d, { recursive: true }); },
              load: async () => {},
            };
          },
        });
      },
    };
    const config = (n: number) => resolveConfig({
      plugins: [plugin], engine: 'scripted', trainer: 'recorder', sandbox: 'netns', harnesses: ['drifty'],
      tasks: [{ use: 'builtin', options: { families: ['write'] } }],
      run: { steps: n, tasksPerStep: 1, groupSize: 1, concurrency: 1, evalEvery: 0, evalTasks: 1, rolloutTimeoutMs: 30_000 },
    }, { rootDir: dir });
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (m: string) => warnings.push(m) };
    const { runDir } = await train({ config: config(2), name: 'drift', logger });
    const drift = warnings.filter((w) => w.startsWith('harness drifty'));
    expect(drift).toEqual([expect.stringMatching(/^harness drifty: what it sends the model differs from the run's pinned fingerprint \(step 2\): system prompt changed \(\w+ → \w+\)\. /)]);
    const file = JSON.parse(readFileSync(join(runDir, 'fingerprints.json'), 'utf8')) as { pinned: Record<string, HarnessFingerprint>; last: Record<string, HarnessFingerprint> };
    expect(file.pinned.drifty).toMatchObject({ cliVersion: '1.0.0', tools: { write_file: expect.any(String) } });
    expect(file.last.drifty!.system).not.toBe(file.pinned.drifty!.system);

    // The same config run on into the same folder, with a new release whose tool schema changed too.
    write('You are drifty. Be brief.', 'Write a file, relative to the workspace.', '1.1.0');
    warnings.length = 0;
    await train({ config: config(3), name: 'drift', resume: true, logger });
    expect(warnings.filter((w) => w.startsWith('harness drifty'))).toEqual([
      expect.stringContaining("differs from the run's pinned fingerprint (step 3): CLI version 1.0.0 → 1.1.0; system prompt changed"),
      expect.stringContaining('differs from the last one seen (step 3): CLI version 1.0.0 → 1.1.0; tool schemas changed: write_file'),
    ]);
  }, 120_000);

  it('under --frozen, stops the run with CLAWGYM_LOCK_MISMATCH at the step the prompt changed (that step untrained), and at the first call of a run whose harness differs from the locked fingerprint', async () => {
    const dir = tempProject({}, 'clawgym-fp-frozen-');
    const promptFile = join(dir, 'prompt.json');
    const write = (system: string) => writeFileSync(promptFile, JSON.stringify({ system, describe: 'Write a file.', version: '1.0.0' }));
    write('You are drifty.');
    let steps = 0;
    let upgradeAt = 1;
    const plugin = {
      name: 'acme:drifty',
      apply(api: PluginApi) {
        api.provide.harness(driftyHarness(promptFile));
        api.provide.sandbox(netnsSandboxProvider());
        api.provide.trainer({
          name: 'recorder',
          async create(): Promise<Trainer> {
            return {
              name: 'recorder', policyVersion: () => steps,
              async step() { if (++steps === upgradeAt) write('You are drifty. Be brief.'); return { loss: 0, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
              async save(d) { mkdirSync(d, { recursive: true }); },
              load: async () => {},
            };
          },
        });
      },
    };
    const config = resolveConfig({
      plugins: [plugin], engine: 'scripted', trainer: 'recorder', sandbox: 'netns', harnesses: ['drifty'],
      tasks: [{ use: 'builtin', options: { families: ['write'] } }], reporters: [],
      run: { steps: 3, tasksPerStep: 1, groupSize: 1, concurrency: 1, evalEvery: 0, evalTasks: 1, rolloutTimeoutMs: 30_000 },
    }, { rootDir: dir });
    const kernel = await createKernel(config, { logger: { info: () => undefined, warn: () => undefined } });
    const lock = await collectLock(config, kernel).finally(() => kernel.dispose());
    const warnings: string[] = [];
    const logger = { info: () => undefined, warn: (m: string) => warnings.push(m) };
    const frozenTrain = (name: string, frozenLock: RunLock, resume = false) => train({ config, name, resume, logger, frozen: { lock: frozenLock, file: 'clawgym.lock.json' } })
      .then(() => undefined, (err: { code?: string; message: string }) => `${err.code}: ${err.message}`);

    const stopped = await frozenTrain('drift', lock);
    expect(stopped).toMatch(/^CLAWGYM_LOCK_MISMATCH: harness drifty: what it sends the model differs from the run's pinned fingerprint \(step 2\): system prompt changed \(\w+ → \w+\); a --frozen run stops/);
    const runDir = join(dir, 'runs', 'drift');
    // Step 2 (whose rollout showed the change) was not trained: the state and the rollout log end at step 1.
    expect(JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')).step).toBe(1);
    expect(readFileSync(join(runDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step)).toEqual([1]);
    expect(warnings.filter((w) => w.startsWith('harness drifty'))).toEqual([]);

    // The CLI put back, the frozen resume goes on from step 2 to the end.
    write('You are drifty.');
    upgradeAt = 0;
    expect(await frozenTrain('drift', lock, true)).toBeUndefined();
    expect(JSON.parse(readFileSync(join(runDir, 'state.json'), 'utf8')).step).toBe(3);

    // A lock that has the harness's fingerprint (a run of the config had seen it) holds a new run to
    // it from its first call, the held-out evaluation before step 1.
    const pinned = (JSON.parse(readFileSync(join(runDir, 'fingerprints.json'), 'utf8')) as { pinned: Record<string, HarnessFingerprint> }).pinned.drifty!;
    write('You are drifty. Be brief.');
    const fresh = await frozenTrain('fresh', { ...lock, harnesses: { drifty: { ...lock.harnesses.drifty!, fingerprint: pinned } } });
    expect(fresh).toMatch(/^CLAWGYM_LOCK_MISMATCH: harness drifty: what it sends the model differs from the one in clawgym\.lock\.json \(held-out evaluation\): system prompt changed/);
    // Nothing was trained: no step's rollouts were logged.
    expect(existsSync(join(dir, 'runs', 'fresh', 'rollouts.jsonl'))).toBe(false);
    // The CLI put back, its resume goes on: what it was stopped by was not pinned as the run's own.
    write('You are drifty.');
    expect(await frozenTrain('fresh', { ...lock, harnesses: { drifty: { ...lock.harnesses.drifty!, fingerprint: pinned } } }, true)).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dir, 'runs', 'fresh', 'state.json'), 'utf8')).step).toBe(3);
  }, 180_000);
});
