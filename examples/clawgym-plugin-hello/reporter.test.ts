import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bubblewrapPath, resolveConfig, train, type MetricsEvent, type ReportedRun, type Trainer } from '@clawgym/core';
import { describeIf, removeTempProjects, tempProject } from '@clawgym/core/testing';
// The example as a user installs it (plain CommonJS, `require('@clawgym/core')`).
import hello = require('./index.js');

afterAll(removeTempProjects);

/** A trainer that counts its steps and saves the count: what it is asked is not the point here. */
const recordingTrainer = {
  name: 'acme:recording-trainer',
  apply(api: import('@clawgym/core').PluginApi) {
    api.provide.trainer({
      name: 'recording',
      async create(): Promise<Trainer> {
        let version = 0;
        return {
          name: 'recording', policyVersion: () => version,
          async step() { version++; return { loss: 0.25, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
          async save(dir) { mkdirSync(dir, { recursive: true }); writeFileSync(join(dir, 'version.json'), String(version)); },
          load: async () => {},
        };
      },
    });
  },
};

describeIf(bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)', 'reporters in a real run', () => {
  it('the example plugin\'s reporter, a configured one and the built-ins receive every metrics event; each renders at the end', async () => {
    const dir = tempProject({}, 'clawgym-reporters-');
    const received: MetricsEvent[] = [];
    const runs: ReportedRun[] = [];
    const rendered: string[] = [];
    const audit = {
      name: 'acme:audit',
      apply(api: import('@clawgym/core').PluginApi) {
        api.provide.reporter({
          name: 'audit',
          onMetrics(event, run) { received.push(event); runs.push(run); },
          async render(runDir) { rendered.push(runDir); return join(runDir, 'audit.txt'); },
        });
      },
    };
    const logs: string[] = [];
    const config = resolveConfig({
      name: 'reporters', plugins: [hello({ tag: 'from-test' }), audit, recordingTrainer],
      engine: 'scripted', trainer: 'recording', harnesses: ['agentloop'],
      tasks: [{ use: 'builtin', options: { families: ['write'] } }],
      reporters: ['hello', 'audit', 'tensorboard', 'html'],
      run: { steps: 2, tasksPerStep: 1, groupSize: 2, concurrency: 2, evalTasks: 1, evalEvery: 0, rolloutTimeoutMs: 60_000 },
    }, { rootDir: dir });
    const { runDir } = await train({ config, logger: { info: (m) => logs.push(m), warn: (m) => logs.push(`warning: ${m}`) } });

    // Every event the metrics file holds, in order (the run's start, evaluations, steps), reached the configured reporter, for this run.
    const file = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as MetricsEvent);
    expect(file.map((e) => `${e.kind}@${e.step}`)).toEqual(['info@0', 'eval@0', 'step@1', 'step@2', 'eval@2']);
    expect(received).toEqual(file);
    expect(runs.every((r) => r.runDir === runDir && r.runId === 'reporters')).toBe(true);
    expect(rendered).toEqual([runDir]);
    // The example's reporter logs one line per step event with that step's values.
    const steps = file.filter((e) => e.kind === 'step');
    expect(logs.filter((l) => l.startsWith('[hello] '))).toEqual(steps.map((e) => `[hello] step ${e.step}: ${JSON.stringify(e.values)}`));
    expect(steps.every((e) => e.values['train/loss'] === 0.25)).toBe(true);
    // The built-ins rendered too: TensorBoard event files and the HTML report.
    expect(readdirSync(join(runDir, 'tensorboard')).some((f) => f.startsWith('events.out.tfevents.'))).toBe(true);
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toContain('<html');
    // The example's beforeRollout tag travels with each rollout into the evaluation's results.
    const evaluated = JSON.parse(readFileSync(join(runDir, 'eval', 'step-0', 'eval.json'), 'utf8')) as { rollouts: { tags: string[] }[] };
    expect(evaluated.rollouts.map((r) => r.tags)).toEqual([['from-test']]);
  }, 240_000);
});
