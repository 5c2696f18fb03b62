import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig } from '../config/load';
import type { Trainer } from '../contracts/trainer';
import type { RolloutTree } from '../contracts/tree';
import type { PluginApi } from '../contracts/plugin';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '../testing';
import { sftRun } from './sft';

afterAll(removeTempProjects);

describeIf(bubblewrapMissing(), 'sft, composed like a run', () => {
  it('plays the oracle through the harness with the kernel\'s hooks and trains on trees that went through onTreeBuilt', async () => {
    const dir = tempProject({}, 'clawgym-sft-');
    const batches: RolloutTree[][] = [];
    const tagged: string[] = [];
    const plugin = {
      name: 'acme:sft-observer',
      apply(api: PluginApi) {
        api.hooks.beforeRollout.tap(undefined, (r) => { tagged.push(r.rolloutId); return { ...r, tags: [...r.tags, 'observed'] }; });
        api.hooks.onTreeBuilt.tap(undefined, (t) => ({ ...t, filterCounts: { ...t.filterCounts, observed: 1 } }));
        api.provide.trainer({
          name: 'supervised-recorder',
          async create(): Promise<Trainer> {
            return {
              name: 'supervised-recorder', policyVersion: () => batches.length,
              step: async () => { throw new Error('sft takes supervised steps only'); },
              async supervisedStep(trees) { batches.push([...trees]); return { loss: 1 / batches.length, tokens: 7 }; },
              async save(d) { mkdirSync(d, { recursive: true }); writeFileSync(join(d, 'steps.json'), String(batches.length)); },
              load: async () => {},
            };
          },
        });
      },
    };
    const config = resolveConfig({
      plugins: [plugin], engine: 'scripted', trainer: 'supervised-recorder', harnesses: ['agentloop'],
      tasks: [{ use: 'builtin', options: { families: ['write'] } }], run: { concurrency: 2, rolloutTimeoutMs: 60_000 },
    }, { rootDir: dir });
    const runDir = join(dir, 'runs', 'sft');
    const lines: string[] = [];
    await sftRun({
      config, name: 'sft', runDir, demos: 2, steps: 3, batchSize: 2, saveEvery: 0, lr: 1e-3, stopAfter: 3,
      out: join(runDir, 'checkpoint'), log: (s) => lines.push(s), print: (s) => lines.push(s),
    });
    // Two tasks played through agentloop, each through beforeRollout; both oracle plays passed.
    expect(tagged).toHaveLength(2);
    const played = JSON.parse(readFileSync(join(runDir, 'demos', 'eval.json'), 'utf8')) as { rollouts: { pass: boolean; tags: string[] }[] };
    expect(played.rollouts.map((r) => [r.pass, r.tags])).toEqual([[true, ['observed']], [true, ['observed']]]);
    // Three supervised steps on demonstration trees, each having passed the onTreeBuilt tap.
    expect(batches).toHaveLength(3);
    expect(batches.flat().every((t) => t.filterCounts.observed === 1 && t.reward === 1)).toBe(true);
    expect(existsSync(join(runDir, 'demos', 'calls'))).toBe(true);
    expect(readFileSync(join(runDir, 'checkpoint', 'steps.json'), 'utf8')).toBe('3');
    expect(lines.join('')).toContain('2 demonstrations (of 2 rollouts); 3 supervised steps');
  }, 120_000);
});
