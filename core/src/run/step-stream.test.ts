import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { headOf, type CallHead, type ModelCallRecord } from '../contracts/records';
import type { Trainer, TrainerBatch } from '../contracts/trainer';
import type { RolloutReport } from '../6-rollout/runner';
import { CallStore } from '../5-records/call-store';
import { createTestKernel } from '../testing';
import { simulateRollout, type HarnessOp } from '../testing/simulated-harness';
import { clippedTisLoss } from '../9-train/policy-loss';
import { trainableNodes } from '../7-tree/trainable';
import { rolloutEntryOf } from '../report/rollout-log';
import { runStep } from './step';

const template = byteChatMl().chatTemplate;
const harness = { name: 'sim', wireFormat: 'openai-chat' as const, check: async () => ({ ok: true }), run: async () => ({ exitCode: 0, timedOut: false, logTail: '' }) };
const task = { id: 't1', category: 'files', instruction: 'do it', setup: async () => {}, verify: async () => ({ pass: true, reward: 1, details: '' }) } as never;
/** Sessions with forks, retries, side calls and compaction: trees with more than one branch. */
const OPS: HarnessOp[][] = [
  ['step', 'retry', 'step', 'subagent', 'step'],
  ['step', 'rewrite', 'step', 'compaction', 'step', 'fail', 'step'],
  ['step', 'step', 'subagent', 'retry', 'step'],
];

function trainerOf(steps: TrainerBatch[]): Trainer {
  return {
    name: 'recording', policyVersion: () => steps.length,
    async step(batch) { steps.push(batch); return { loss: 0.5, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
    save: async () => {}, load: async () => {},
  };
}

/** Reports of the step's jobs, each with `calls` of its session (heads, or the full records). */
function runnerOf(callsOf: (rolloutId: string, i: number) => RolloutReport['records']) {
  return {
    run: async (jobs: readonly { rolloutId: string; task: { id: string } }[]) => jobs.map((j, i): RolloutReport => ({
      rolloutId: j.rolloutId, sessionId: j.rolloutId, attempts: 1, outcome: 'ok', reward: i % 2, details: '', durationMs: 1,
      calls: callsOf(j.rolloutId, i).length, records: callsOf(j.rolloutId, i),
      request: { runId: 'r', rolloutId: j.rolloutId, step: 1, taskId: j.task.id, category: 'files', harness: 'sim', instruction: '', env: {}, tags: [], harnessOptions: {} },
    })),
  };
}

describe('a step whose reports hold call heads only', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'clawgym-step-stream-')); });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('builds each tree from the store as a stream: the same trees, datums and log figures as from the whole records', async () => {
    const kernel = await createTestKernel({
      plugins: [{ name: 'algo', apply: (api) => api.provide.algorithm({ name: 'grpo', needsValues: false, computeAdvantages: (input) => ({
        algorithm: 'grpo', metrics: {},
        advantages: new Map(input.trees.map((t) => [t.rolloutId, new Map(trainableNodes(t).map((n) => [n.id, new Float32Array(n.tokens.length).fill(t.reward + 1)]))])),
      }) }) }],
      config: { run: { tasksPerStep: 1, groupSize: OPS.length } },
    });
    // The records as the proxy wrote them (format 2: a later call refers to the chain it extends).
    const store = new CallStore(dir);
    const full = new Map<string, ModelCallRecord[]>();
    const fullOf = (id: string, i: number) => {
      if (!full.has(id)) full.set(id, simulateRollout(OPS[i]!, 7 + i, id));
      return full.get(id)!;
    };
    const ids = OPS.map((_, g) => `s1a1-t0-sim-${g}`);
    for (const [i, id] of ids.entries()) {
      for (const r of fullOf(id, i)) await store.append(r);
      await store.close(id);
    }
    const heads = new Map<string, CallHead[]>();
    for (const id of ids) {
      const hs: CallHead[] = [];
      for await (const h of store.heads(id)) hs.push(h);
      heads.set(id, hs);
    }
    expect([...heads.values()].flat().some((h) => 'promptIds' in h)).toBe(false);
    expect([...heads.values()].map((h) => h.length)).toEqual(ids.map((id, i) => fullOf(id, i).length));

    const streamedSteps: TrainerBatch[] = [];
    const streamed = await runStep({
      kernel, runner: runnerOf((id) => heads.get(id)!), trainer: trainerOf(streamedSteps), policyLoss: clippedTisLoss,
      tasks: [task], harnesses: [{ harness, options: {} }], engine: { chatTemplate: template }, records: store,
    }, 1, 1);
    const wholeSteps: TrainerBatch[] = [];
    const whole = await runStep({
      kernel, runner: runnerOf(fullOf), trainer: trainerOf(wholeSteps), policyLoss: clippedTisLoss,
      tasks: [task], harnesses: [{ harness, options: {} }], engine: { chatTemplate: template },
    }, 1, 1);

    expect(streamed!.trees.length).toBe(OPS.length);
    expect(streamed!.trees.some((t) => t.nodes.length > 2)).toBe(true);
    expect(streamed!.trees).toEqual(whole!.trees);
    expect(streamedSteps).toHaveLength(1);
    expect(streamedSteps[0]!.trees).toEqual(wholeSteps[0]!.trees);
    expect(streamedSteps[0]!.advantages.advantages).toEqual(wholeSteps[0]!.advantages.advantages);
    // The rollout log's figures from the heads equal those computed from the whole records.
    for (const [i, r] of streamed!.reports.entries()) {
      const entry = rolloutEntryOf(1, r, streamed!.trees[i], streamed!.advantages);
      expect(entry).toEqual(rolloutEntryOf(1, whole!.reports[i]!, whole!.trees[i], whole!.advantages));
      expect(entry.promptTokens).toBe(fullOf(r.sessionId, i).reduce((n, c) => n + c.promptIds.length, 0));
    }
  });

  it('refuses reports without prompt ids when the step has no store to stream them from', async () => {
    const kernel = await createTestKernel({ config: { run: { tasksPerStep: 1, groupSize: 1 } } });
    const step = runStep({
      kernel, runner: runnerOf((id) => simulateRollout(['step'], 1, id).map(headOf)), trainer: trainerOf([]), policyLoss: clippedTisLoss,
      tasks: [task], harnesses: [{ harness, options: {} }], engine: { chatTemplate: template },
    }, 1, 1);
    await expect(step).rejects.toThrow(/no record source/);
  });
});
