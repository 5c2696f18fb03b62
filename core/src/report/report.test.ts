import { mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chartsOf, smooth } from './charts';
import { promptMessages } from './prompt-messages';
import { writeReport } from './report';
import { serveReport } from './report-server';
import { appendRollouts, readRollouts, rolloutEntryOf, type RolloutEntry } from './rollout-log';
import { rolloutDetail } from './rollout-detail';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { CallStore } from '../5-records/call-store';
import { buildTree } from '../7-tree/builder';
import { simulateRollout } from '../testing/simulated-harness';
import { StepAggregates } from './step-aggregates';
import type { RunLock } from '../contracts/lock';

const dirs: string[] = [];
const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** Metrics as clawgym run writes them: two harnesses, evals at 0, 2 and 4. */
function metrics(dir: string) {
  const lines: object[] = [];
  for (const step of [0, 2, 4]) lines.push({ kind: 'eval', step, time: 0, values: { pass1: step / 10, 'pass1/n': 40, 'pass1/se': 0.05, 'pass1/agentloop/all': step / 10, 'pass1/agentloop/write': step / 8 } });
  for (let step = 1; step <= 4; step++) {
    lines.push({ kind: 'step', step, time: 0, values: {
      reward: step / 8, 'reward/agentloop': step / 8, 'reward/claude-code': step / 10, pass: step / 8, rollouts: 16, infra: step === 3 ? 1 : 0, calls: 40, trained: 15,
      seconds: 10, 'seconds/rollouts': 5, 'tokens/generated': 500, 'filter/dead-leaf': 3, 'filter/auxiliary': 0, 'train/mismatchAbsLogp': 0.001, 'train/mismatchKl': 0.0001, 'train/clipFraction': 0.02, 'train/tokens': 900,
    } });
  }
  writeFileSync(join(dir, 'metrics.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
}

const entry = (step: number, harness: string, over: Partial<RolloutEntry> = {}): RolloutEntry => ({
  rolloutId: `s${step}-${harness}`, sessionId: `s${step}-${harness}`, step, taskId: 't', category: 'write', harness, outcome: 'ok', reward: 1, pass: true,
  verdict: 'ok', details: 'ok', attempts: 1, durationMs: 10, calls: 3, tito: { reuse: 1, forks: 1, retry: 0, side: 0, failed: 0 }, drift: { clean: 2, realigned: 1, fork: 0 },
  promptTokens: 10, outputTokens: 5, policy: [step - 1, step - 1], trainedAt: step, ...over,
});

describe('run charts', () => {
  it('smooths per-step reward, draws Pass@1 with its standard error, and counts what only the rollout log holds', () => {
    const dir = tmp('report-');
    metrics(dir);
    const events = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const steps = new StepAggregates();
    steps.add(entry(1, 'agentloop'));
    steps.add(entry(1, 'claude-code', { outcome: 'infra-error', reward: null, pass: null, infraClass: 'sandbox' }));
    steps.add(entry(2, 'agentloop', { category: 'csv', reward: 0 }));
    const charts = chartsOf([{ name: 'a', events, steps }]);
    const byId = Object.fromEntries(charts.map((c) => [c.id, c]));
    expect(charts.map((c) => c.id)).toEqual(['reward', 'pass1', 'reward-harness', 'reward-category', 'infra', 'tito', 'drift', 'throughput', 'staleness', 'lengths', 'trees', 'pass1-cost', 'cost', 'mismatch']);
    expect(byId.reward!.series.map((s) => [s.name, Boolean(s.raw)])).toEqual([['raw', true], ['smoothed', false]]);
    expect(byId.pass1!.series[0]!.err).toEqual([0.05, 0.05, 0.05]);
    expect(byId.pass1!.series.map((s) => s.name)).toEqual(['all', 'agentloop/all', 'agentloop/write']);
    expect(byId['reward-harness']!.series.map((s) => s.name)).toEqual(['agentloop', 'claude-code']);
    expect(byId['reward-category']!.series.map((s) => s.name)).toEqual(['csv', 'write']);
    // One sandbox failure at step 1, none at step 2: the class is drawn at both.
    expect(byId.infra!.series.find((s) => s.name === 'sandbox')!.points).toEqual([[1, 1], [2, 0]]);
    expect(byId.tito!.series[0]).toEqual({ name: 'agentloop', points: [[1, 0.5], [2, 0.5]] });
    expect(byId.drift!.series[0]!.points[0]).toEqual([1, 1 / 3]);
    expect(byId.throughput!.series[0]!.points[0]).toEqual([1, 100]);
    expect(byId.staleness!.series.find((s) => s.name === 'mean')!.points).toEqual([[1, 1], [2, 1]]);
  });

  it('overlays runs: every series named after its run', () => {
    const dir = tmp('report-');
    metrics(dir);
    const events = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const charts = chartsOf([{ name: 'a', events, steps: new StepAggregates() }, { name: 'b', events, steps: new StepAggregates() }]);
    expect(charts[0]!.series.map((s) => s.name)).toEqual(['a: raw', 'a: smoothed', 'b: raw', 'b: smoothed']);
  });

  it('smooths as TensorBoard does: a constant stays constant, the first point is its own', () => {
    expect(smooth([[1, 3], [2, 3], [3, 3]]).map((p) => +p[1].toFixed(9))).toEqual([3, 3, 3]);
    const s = smooth([[1, 0], [2, 1], [3, 1], [4, 1]]);
    expect(s[0]).toEqual([1, 0]);
    expect(s[3]![1]).toBeGreaterThan(s[1]![1]);
    expect(s[3]![1]).toBeLessThan(1);
  });
});

describe('prompt messages', () => {
  it('cuts ChatML into turns, tool results apart, the generation prompt dropped', () => {
    const m = promptMessages('<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\n<tool_response>\nyak\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
    expect(m).toEqual([{ role: 'system', kind: 'system', text: 'be brief' }, { role: 'user', kind: 'tool_result', text: '<tool_response>\nyak\n</tool_response>' }]);
  });
  it('cuts Llama 3 turns, and keeps text that follows a reused prefix as its own block', () => {
    const m = promptMessages('<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n{"ok":1}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n');
    expect(m).toEqual([{ role: 'ipython', kind: 'tool_result', text: '{"ok":1}' }]);
    expect(promptMessages('tail of a turn<|im_end|>\n<|im_start|>user\nnext')).toEqual([{ role: '…', kind: 'text', text: 'tail of a turn' }, { role: 'user', kind: 'text', text: 'next' }]);
  });
  it('keeps text of no known template whole', () => {
    expect(promptMessages('plain words')).toEqual([{ role: '?', kind: 'text', text: 'plain words' }]);
  });
});

describe('rollout log', () => {
  it('reads back what was appended, skips a line a kill cut short, and yields nothing for a run without one', async () => {
    const dir = tmp('rollouts-');
    await appendRollouts(dir, [entry(1, 'agentloop'), entry(2, 'agentloop')]);
    appendFileSync(join(dir, 'rollouts.jsonl'), '{"rolloutId":"cut');
    const read: RolloutEntry[] = [];
    for await (const e of readRollouts(dir)) read.push(e);
    expect(read.map((e) => e.rolloutId)).toEqual(['s1-agentloop', 's2-agentloop']);
    const none: RolloutEntry[] = [];
    for await (const e of readRollouts(join(dir, 'nowhere'))) none.push(e);
    expect(none).toEqual([]);
  });
});

describe('rollout lengths of an asynchronous run', () => {
  it('draws the length distribution of finished and trained rollouts and says how their means compare', async () => {
    const dir = tmp('report-');
    metrics(dir);
    // Two steps: 4 rollouts finished in each, the long one (10 s) dropped at step 1.
    appendFileSync(join(dir, 'metrics.jsonl'), [1, 2].map((step) => `${JSON.stringify({ kind: 'step', step: 10 + step, time: 0, values: {
      'async/len_generated/n': 4, 'async/len_generated/seconds': 13, 'async/len_generated/lt_1': 3, 'async/len_generated/lt_16': 1,
      'async/len_trained/n': step === 1 ? 3 : 4, 'async/len_trained/seconds': step === 1 ? 3 : 13, 'async/len_trained/lt_1': 3, ...(step === 1 ? {} : { 'async/len_trained/lt_16': 1 }),
    } })}\n`).join(''));
    const html = readFileSync(await writeReport(dir), 'utf8');
    const charts = JSON.parse(/<script id="cg-charts" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!) as { id: string; series: { name: string; points: [number, number][] }[] }[];
    expect(charts.find((c) => c.id === 'lengths')!.series).toEqual([
      { name: 'finished (trained or dropped)', points: [[1, 0.75], [16, 0.25]] },
      { name: 'trained', points: [[1, 6 / 7], [16, 1 / 7]] },
    ]);
    // Means: 16 s over 7 trained, 26 s over 8 finished.
    expect(html).toContain(`<tr><td>rollout length, trained / finished</td><td><b>${(16 / 7 / (26 / 8)).toFixed(3)} (mean 2.3 s trained, 3.3 s finished; 1.000: no bias against long tasks)</b>`);
  });
});

describe('written report', () => {
  it('is one self-contained file with no external references, for a run with no rollout log too', async () => {
    const dir = tmp('report-');
    metrics(dir);
    const html = readFileSync(await writeReport(dir), 'utf8');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
    expect(html).toContain('0.0% ± 5.0% → 40.0% ± 5.0%');
    expect(html).toContain('no rollout log in this run folder');
  });

  it('shows the run\'s lock: harness CLIs, model files, sandbox, tasks, packages', async () => {
    const dir = tmp('report-');
    metrics(dir);
    const lock: RunLock = {
      lockVersion: 1, createdAt: '2026-12-07T00:00:00.000Z', config: 'a'.repeat(64), packages: { '@clawgym/core': '0.1.0', '@clawgym/harness-pi': '0.1.0' },
      harnesses: { pi: { provider: '@clawgym/harness-pi@0.1.0', cli: { package: '@mariozechner/pi-coding-agent', version: '0.70.2', integrity: 'sha512-abcdefghijklmnopqrstuvwxyz', manifest: 'b'.repeat(64) }, fingerprint: { harness: 'pi', system: '0123456789abcdef', tools: { bash: 'x', read: 'y' } } } },
      model: { 'engine.tokenizer': { 'tokenizer_config.json': 'c'.repeat(64) } },
      sandbox: { name: 'docker', provider: '@clawgym/sandbox-docker@0.1.0', kind: 'image', ref: 'clawgym-openclaw:1', digest: `sha256:${'d'.repeat(64)}` },
      tasks: { builtin: { provider: '@clawgym/task-builtin@0.1.0', tasks: 'e'.repeat(64), train: 1000, test: 600 } },
    };
    writeFileSync(join(dir, 'clawgym.lock.json'), JSON.stringify(lock));
    const html = readFileSync(await writeReport(dir), 'utf8');
    expect(html).toContain('<summary>run lock (clawgym.lock.json)</summary>');
    expect(html).toContain('<tr><td>harness</td><td>pi: @mariozechner/pi-coding-agent@0.70.2 sha512-abcdefghijkl… (from @clawgym/harness-pi@0.1.0), system 0123456789abcdef, 2 tools</td></tr>');
    expect(html).toContain('<tr><td>sandbox</td><td>docker (from @clawgym/sandbox-docker@0.1.0): image clawgym-openclaw:1 dddddddddddd</td></tr>');
    expect(html).toContain('<tr><td>tasks</td><td>builtin: 1000 train, 600 test, eeeeeeeeeeee</td></tr>');
  });
});

describe('report server', () => {
  it('listens on loopback only', async () => {
    const dir = tmp('report-');
    metrics(dir);
    await expect(serveReport([dir], { host: '0.0.0.0' })).rejects.toThrow(/loopback only/);
    const server = await serveReport([dir]);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const res = await fetch(`${server.url}data/detail-0.js`);
      expect(res.status).toBe(404); // a run with no rollout log has no rollout 0
      expect(await (await fetch(server.url)).text()).toContain('<h1>ClawGym run');
    } finally {
      await server.close();
    }
  });
});

describe('a rollout opened in the viewer', () => {
  it('reads its calls from the store a record at a time (never the whole session) and names each tree node', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clawgym-rollout-detail-'));
    try {
      const { tokenizer, chatTemplate } = byteChatMl();
      const store = new CallStore(join(dir, 'calls'));
      const records = simulateRollout(['step', 'retry', 'step', 'subagent', 'compaction', 'step'], 3, 'r1');
      for (const r of records) await store.append(r);
      await store.close('r1');
      const info = { rolloutId: 'r1', taskId: 't', category: 'c', harness: 'sim', outcome: 'ok' as const, reward: 1 };
      const tree = buildTree(records, info, { messageEndId: chatTemplate.stopIds[0]! });
      const report = { rolloutId: 'r1', sessionId: 'r1', attempts: 1, outcome: 'ok' as const, reward: 1, details: '', durationMs: 1, calls: records.length, records,
        request: { runId: 'run', rolloutId: 'r1', step: 1, taskId: 't', category: 'c', harness: 'sim', instruction: '', env: {}, tags: [], harnessOptions: {} } };
      const entry = rolloutEntryOf(1, report, tree);
      const read = jest.spyOn(CallStore.prototype, 'read');
      const detail = await rolloutDetail(dir, entry, { tokenizer, chatTemplate });
      expect(read).not.toHaveBeenCalled();
      read.mockRestore();
      expect(detail.error).toBeUndefined();
      expect(detail.calls.map((c) => [c.index, c.promptTokens, c.outputTokens])).toEqual(records.map((r) => [r.callIndex, r.promptIds.length, r.outputIds.length]));
      expect(detail.calls.map((c) => c.origin.kind)).toEqual(records.map((r) => r.origin.kind));
      // The tree rebuilt from the streamed records is the logged one: every node has its text.
      expect(tree.nodes.length).toBeGreaterThan(2);
      expect(detail.nodeText).toEqual(tree.nodes.map((n) => tokenizer.decode(n.tokens).slice(0, 4000)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
