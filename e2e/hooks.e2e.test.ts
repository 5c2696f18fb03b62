import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bubblewrapMissing, describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';

afterAll(removeTempProjects);

const repo = resolve(__dirname, '..');
const bin = join(repo, 'core', 'bin', 'clawgym.js');

interface Tap { hook: string; [k: string]: unknown }

/**
 * A tiny real run whose config carries a plugin that taps every hook of the map, as a user's
 * plugin does, and writes what each tap received to `log` (one JSON line per call). The two
 * waterfalls it can observe downstream change their value: `beforeRollout` tags each rollout
 * (the tag must reach `afterRollout`), `computeAdvantage` puts a metric of its own in the
 * result (it must reach the step's metrics).
 */
function project(log: string) {
  return tempProject({ 'clawgym.config.mjs': `import { appendFileSync } from 'node:fs';
const note = (hook, fields) => appendFileSync(${JSON.stringify(log)}, JSON.stringify({ hook, ...fields }) + '\\n');
const everyHook = {
  name: 'acme:every-hook',
  apply(api) {
    const h = api.hooks;
    h.runStart.tapPromise('acme', async (run) => note('runStart', { runId: run.runId }));
    h.stepStart.tapPromise('acme', async (s) => note('stepStart', { step: s.step }));
    h.beforeRollout.tapPromise('acme', async (req) => { note('beforeRollout', { rolloutId: req.rolloutId, step: req.step }); return { ...req, tags: [...req.tags, 'acme-tagged'] }; });
    h.onModelCall.tapPromise('acme', async (r) => note('onModelCall', { rolloutId: r.rolloutId, callIndex: r.callIndex, generated: r.outputIds.length }));
    h.afterRollout.tapPromise('acme', async (r) => note('afterRollout', { rolloutId: r.request.rolloutId, tags: r.request.tags, outcome: r.outcome }));
    h.onTreeBuilt.tapPromise('acme', async (tree) => { note('onTreeBuilt', { rolloutId: tree.rolloutId }); return tree; });
    h.computeAdvantage.tapPromise('acme', async (result, input) => { note('computeAdvantage', { algorithm: input.algorithm, trees: input.trees.length }); return { ...result, metrics: { ...result.metrics, acme: 42 } }; });
    h.stepEnd.tapPromise('acme', async (s) => note('stepEnd', { step: s.step, acme: s.metrics['adv/acme'] }));
    h.runEnd.tapPromise('acme', async (s) => note('runEnd', { status: s.status, steps: s.steps }));
  },
};
const model = { model: { dModel: 32, layers: 1, heads: 2, context: 384 } };
export default {
  name: 'tiny', plugins: [everyHook], engine: { use: 'embedded', options: model }, trainer: { use: 'embedded', options: model },
  harnesses: ['agentloop'], tasks: [{ use: 'builtin', options: { families: ['write'] } }], algorithm: 'grpo',
  run: { steps: 2, tasksPerStep: 1, groupSize: 2, concurrency: 2, evalTasks: 1, evalEvery: 0, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-hooks-');
}

describeIf(bubblewrapMissing(), 'every hook of the map, tapped by a plugin in a real run', () => {
  it('fires in pipeline order with what it documents, and the waterfalls\' changes reach what comes after them', () => {
    const log = join(tempProject({}), 'taps.jsonl');
    const dir = project(log);
    const r = spawnSync(process.execPath, [bin, 'run'], { cwd: dir, encoding: 'utf8', timeout: 240_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const taps = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Tap);
    const hooks = taps.map((t) => t.hook);

    // runStart first, runEnd last (completed, 2 steps); each step starts and ends once, in order.
    expect(taps[0]).toEqual({ hook: 'runStart', runId: 'tiny' });
    expect(taps.at(-1)).toEqual({ hook: 'runEnd', status: 'completed', steps: 2 });
    expect(taps.filter((t) => t.hook === 'stepStart').map((t) => t.step)).toEqual([1, 2]);
    expect(taps.filter((t) => t.hook === 'stepEnd').map((t) => t.step)).toEqual([1, 2]);

    // Every rollout (2 per step, 1 per held-out evaluation at steps 0 and 2): beforeRollout, its
    // model calls, then afterRollout carrying the tag beforeRollout added.
    // (held-out evaluations reuse their rollout ids in folders of their own: match each start to the next end).
    const starts = taps.flatMap((t, i) => (t.hook === 'beforeRollout' ? [i] : []));
    expect(starts).toHaveLength(2 * 2 + 2);
    for (const before of starts) {
      const id = taps[before]!.rolloutId;
      const after = taps.findIndex((t, i) => i > before && t.hook === 'afterRollout' && t.rolloutId === id);
      expect(after).toBeGreaterThan(before);
      expect(taps.slice(before, after).filter((t) => t.hook === 'onModelCall' && t.rolloutId === id).length).toBeGreaterThan(0);
      expect(taps[after]!.tags).toContain('acme-tagged');
    }

    // In each step: its rollouts, then a tree per trained rollout, then advantages once, then stepEnd.
    for (const step of [1, 2]) {
      const start = taps.findIndex((t) => t.hook === 'stepStart' && t.step === step);
      const end = taps.findIndex((t) => t.hook === 'stepEnd' && t.step === step);
      const inStep = hooks.slice(start, end + 1);
      expect(inStep.filter((h) => h === 'onTreeBuilt').length).toBeGreaterThan(0);
      expect(inStep.lastIndexOf('afterRollout')).toBeLessThan(inStep.indexOf('onTreeBuilt'));
      const advantage = taps.slice(start, end + 1).filter((t) => t.hook === 'computeAdvantage');
      if (advantage.length) {
        expect(advantage).toEqual([{ hook: 'computeAdvantage', algorithm: 'grpo', trees: 2 }]);
        expect(inStep.lastIndexOf('onTreeBuilt')).toBeLessThan(inStep.indexOf('computeAdvantage'));
      }
    }
    // The metric computeAdvantage added is in the metrics of a step that trained.
    expect(taps.filter((t) => t.hook === 'stepEnd').some((t) => t.acme === 42)).toBe(true);
  }, 300_000);
});
