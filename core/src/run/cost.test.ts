import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricsEvent } from '../contracts/reporter';
import { main } from '../cli/main';
import { bubblewrapMissing, describeIf } from '../testing/harnesses';
import { removeTempProjects, tempProject } from '../testing';
import { detectCgroups } from '../2-sandbox/cgroups';
import type { RolloutEntry } from '../report/rollout-log';

afterAll(removeTempProjects);

const PRICES = { currency: 'USD', promptTokens: 3, reusedTokens: 0.3, generatedTokens: 15, trainedTokens: 1, sandboxHour: 0.36, engineGpuHour: 2.5, engineGpus: 2, trainerGpuHour: 3, trainerGpus: 1 };

/**
 * A project whose every rollout earns half a point: agentloop lists the files (a second call
 * that reuses the first's tokens), then answers; the trainer reports 7 tokens per step.
 */
function project(): string {
  return tempProject({ 'clawgym.config.mjs': `import { mkdirSync } from 'node:fs';
const parts = { name: 'acme:halves', apply(api) {
  api.provide.taskSuite({ name: 'halves', async tasks(split, { limit }) {
    return Array.from({ length: Math.min(limit ?? 4, 4) }, (_, i) => ({ id: split + '-' + i, category: 'half', instruction: 'List the files, then say done.',
      async setup(ws) { await ws.writeFile('a.txt', 'x'); }, async verify() { return { reward: 0.5, pass: false, details: 'half a point' }; } }));
  } });
  api.provide.trainer({ name: 'recorder', async create() { let v = 0; return { name: 'recorder', policyVersion: () => v,
    async step() { v++; return { loss: 0, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 7 }; },
    async save(d) { mkdirSync(d, { recursive: true }); }, async load() {} }; } });
} };
export default { name: 'costs', plugins: [parts], trainer: 'recorder', harnesses: ['agentloop'], tasks: ['halves'], reporters: ['html'],
  engine: { use: 'scripted', options: { replies: [{ toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] }, { text: 'done' }] } },
  prices: ${JSON.stringify(PRICES)},
  run: { steps: 2, tasksPerStep: 1, groupSize: 2, concurrency: 2, evalEvery: 0, evalTasks: 2, rolloutTimeoutMs: 60000 } };
` }, 'clawgym-cost-');
}

async function cli(argv: string[], cwd: string) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; }, cwd });
  return { code, out, err };
}

const lines = <T>(file: string): T[] => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as T);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

const cg = detectCgroups();
const accounts = cg.pids?.version === 2 || cg.cpuacct !== undefined;

describeIf(bubblewrapMissing(), 'cost accounting of a run', () => {
  it('puts each rollout\'s and step\'s figures and the run\'s totals in metrics.jsonl and rollouts.jsonl, prices them, and shows them in the report and in clawgym eval', async () => {
    const dir = project();
    const run = await cli(['run'], dir);
    expect(run.code).toBe(0);
    const runDir = join(dir, 'runs', 'costs');
    const events = lines<MetricsEvent>(join(runDir, 'metrics.jsonl')).filter((e) => e.kind !== 'info');
    const rollouts = lines<RolloutEntry>(join(runDir, 'rollouts.jsonl'));
    expect(events.map((e) => `${e.kind}${e.step}`)).toEqual(['eval0', 'step1', 'step2', 'eval2']);

    for (const e of events.filter((x) => x.kind === 'step')) {
      const v = e.values as Record<string, number>;
      const mine = rollouts.filter((r) => r.step === e.step);
      expect(v['cost/rollouts']).toBe(2);
      // The step's tokens are its rollouts' (counted apart from the records' prompt lengths), split into new and reused.
      expect(v['cost/prompt_tokens_new']! + v['cost/prompt_tokens_reused']!).toBe(sum(mine.map((r) => r.promptTokens)));
      expect(v['cost/prompt_tokens_reused']).toBeGreaterThan(0);
      expect(v['cost/generated_tokens']).toBe(sum(mine.map((r) => r.outputTokens)));
      expect(v['cost/trainer_tokens']).toBe(7);
      expect(v['cost/trainer_seconds']).toBeGreaterThanOrEqual(0);
      expect(v['cost/harness_seconds']).toBeGreaterThan(0);
      expect(v['cost/sandbox_seconds']).toBeGreaterThan(v['cost/harness_seconds']!);
      expect(v['cost/sandbox_seconds']).toBeCloseTo(sum(mine.map((r) => r.cost!.sandboxSeconds)), 6);
      if (accounts) expect(v['cost/cpu_measured']).toBe(2);
      if (accounts) expect(v['cost/sandbox_cpu_seconds']).toBeGreaterThan(0);
      // Money: tokens per million, sandboxes per hour, both GPUs held through the step.
      expect(v['cost/money/tokens']).toBeCloseTo((v['cost/prompt_tokens_new']! * 3 + v['cost/prompt_tokens_reused']! * 0.3 + v['cost/generated_tokens']! * 15 + 7 * 1) / 1e6, 12);
      expect(v['cost/money/sandbox']).toBeCloseTo(v['cost/sandbox_seconds']! / 3600 * 0.36, 12);
      expect(v['cost/money/engine']).toBeCloseTo(v['cost/seconds']! / 3600 * 2 * 2.5, 12);
      expect(v['cost/money/trainer']).toBeCloseTo(v['cost/seconds']! / 3600 * 3, 12);
      expect(v['cost/money']).toBeCloseTo(v['cost/money/tokens']! + v['cost/money/sandbox']! + v['cost/money/engine']! + v['cost/money/trainer']!, 12);
    }
    for (const r of rollouts) expect(r.cost!.promptNew + r.cost!.promptReused).toBe(r.promptTokens);

    // The run's totals: every evaluation and step so far; its reward points are its trained rollouts' (4 × 0.5).
    const totals = events[events.length - 1]!.values as Record<string, number>;
    for (const k of ['sandbox_seconds', 'generated_tokens', 'money', 'trainer_tokens']) {
      expect(totals[`cost/run/${k}`]).toBeCloseTo(sum(events.map((e) => (e.values[`cost/${k}`] as number | undefined) ?? 0)), 9);
    }
    expect(totals['cost/run/reward']).toBe(2);
    expect(totals['cost/run/rollouts']).toBe(8);

    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toMatch(/<tr><td>cost per step<\/td><td><b>[\d.,]+ sandbox-s \(CPU [^)]+\); [\d,]+ prompt tokens new \+ [\d,]+ reused, [\d,]+ generated; trainer [\d.]+ s, 7 tokens; USD [\d.]+<\/b>/);
    expect(html).toMatch(/<tr><td>cost per reward point<\/td><td><b>.*USD [\d.]+ \(2 reward points in 8 rollouts\)<\/b>/);
    const charts = JSON.parse(/<script id="cg-charts" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!) as { id: string; xLabel?: string; series: { points: [number, number][] }[] }[];
    const byCost = charts.find((c) => c.id === 'pass1-cost')!;
    expect(byCost.xLabel).toBe('cost');
    expect(byCost.series[0]!.points.map((p) => p[0])).toEqual([events[0]!.values['cost/run/money'], totals['cost/run/money']]);

    const evaluated = await cli(['eval', '--name', 'eval-costs'], dir);
    expect(evaluated.code).toBe(0);
    expect(evaluated.out).toMatch(/^cost per task: [\d.,]+ sandbox-s \(CPU [^)]+\); [\d,]+ prompt tokens new \+ [\d,]+ reused, [\d,]+ generated; engine [\d.]+ s; USD [\d.]+$/m);
  }, 240_000);
});
