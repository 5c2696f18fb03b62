import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import type { Trainer, TrainerBatch } from '../contracts/trainer';
import type { RolloutReport } from '../6-rollout/runner';
import { createTestKernel } from '../testing';
import { simulateRollout } from '../testing/simulated-harness';
import { clippedTisLoss } from '../9-train/policy-loss';
import { trainableNodes } from '../7-tree/trainable';
import { runStep, stepJobs } from './step';
import { stepMetrics } from './step-metrics';

const template = byteChatMl().chatTemplate;
const harness = { name: 'sim', wireFormat: 'openai-chat' as const, check: async () => ({ ok: true }), run: async () => ({ exitCode: 0, timedOut: false, logTail: '' }) };
const task = { id: 't1', category: 'files', instruction: 'do it', setup: async () => {}, verify: async () => ({ pass: true, reward: 1, details: '' }) } as never;

/** A trainer that only records what it is asked (the step's contract is what core calls). */
function recordingTrainer() {
  const steps: TrainerBatch[] = [];
  const trainer: Trainer = {
    name: 'recording', policyVersion: () => steps.length,
    async step(batch) { steps.push(batch); return { loss: 0.5, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 1 }; },
    save: async () => {}, load: async () => {},
  };
  return { trainer, steps };
}

/** Reports of the step's jobs as a runner would give them: each with `outcome`, ok ones with simulated calls. */
const runnerOf = (outcome: RolloutReport['outcome']) => ({
  run: async (jobs: readonly { rolloutId: string; task: { id: string } }[]) => jobs.map((j, i): RolloutReport => ({
    rolloutId: j.rolloutId, sessionId: j.rolloutId, attempts: 1, outcome, reward: outcome === 'infra-error' ? Number.NaN : i % 2,
    ...(outcome === 'infra-error' ? { infraClass: i % 2 ? 'harness-start' as const : 'engine' as const } : {}),
    details: '', calls: outcome === 'infra-error' ? 0 : 2, durationMs: 1,
    records: outcome === 'infra-error' ? [] : simulateRollout(['step', 'step'], i, j.rolloutId),
    request: { runId: 'r', rolloutId: j.rolloutId, step: 1, taskId: j.task.id, category: 'files', harness: 'sim', instruction: '', env: {}, tags: [], harnessOptions: {} },
  })),
});

describe('one RL step', () => {
  it('does not step the trainer (nor sync the engine) when every rollout failed', async () => {
    const kernel = await createTestKernel({ plugins: [{ name: 'algo', apply: (api) => api.provide.algorithm({ name: 'grpo', needsValues: false, computeAdvantages: () => { throw new Error('no advantages without trainable trees'); } }) }], config: { run: { tasksPerStep: 2, groupSize: 2 } } });
    const { trainer, steps } = recordingTrainer();
    let synced = 0;
    const outcome = await runStep({
      kernel, runner: runnerOf('infra-error'), trainer, policyLoss: clippedTisLoss, tasks: [task], harnesses: [{ harness, options: {} }],
      engine: { chatTemplate: template, syncWeights: async () => { synced++; } },
    }, 1, 1);
    expect(steps).toHaveLength(0);
    expect(synced).toBe(0);
    expect(outcome!.train).toBeUndefined();
    expect(outcome!.reports).toHaveLength(4);
    expect(stepMetrics(outcome!, [{ harness, options: {} }], { seconds: 1, tokens: 0 })).toMatchObject({ rollouts: 4, infra: 4, 'infra/harness-start': 2, 'infra/engine': 2, trained: 0 });
  });

  it('steps the trainer with the advantages of the selected algorithm and the selected loss when rollouts are trainable', async () => {
    const kernel = await createTestKernel({
      plugins: [{ name: 'algo', apply: (api) => api.provide.algorithm({ name: 'grpo', needsValues: false, computeAdvantages: (input) => ({
        algorithm: 'grpo', metrics: {},
        advantages: new Map(input.trees.map((t) => [t.rolloutId, new Map(trainableNodes(t).map((n) => [n.id, new Float32Array(n.tokens.length).fill(t.reward)]))])),
      }) }) }],
      config: { run: { tasksPerStep: 1, groupSize: 2 } },
    });
    const { trainer, steps } = recordingTrainer();
    const outcome = await runStep({
      kernel, runner: runnerOf('ok'), trainer, policyLoss: clippedTisLoss, tasks: [task], harnesses: [{ harness, options: {} }],
      engine: { chatTemplate: template },
    }, 3, 2);
    expect(steps).toHaveLength(1);
    expect(steps[0]!.policyLoss).toBe(clippedTisLoss);
    expect(steps[0]!.advantages.advantages.size).toBe(2);
    expect(outcome!.train!.loss).toBe(0.5);
  });

  it('gives a restarted step fresh rollout ids', () => {
    const ids = async () => {
      const kernel = await createTestKernel({ config: { run: { tasksPerStep: 1, groupSize: 2 } } });
      return [1, 2].map((attempt) => stepJobs({ kernel, tasks: [task], harnesses: [{ harness, options: {} }] }, 4, attempt).map((j) => j.rolloutId));
    };
    return expect(ids()).resolves.toEqual([['s4a1-t0-sim-0', 's4a1-t0-sim-1'], ['s4a2-t0-sim-0', 's4a2-t0-sim-1']]);
  });
});
