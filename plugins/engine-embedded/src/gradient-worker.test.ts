import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clippedTisLoss, ErrorCodes, type AdvantageResult, type PolicyLoss, type RolloutTree, type TrainerBatch, type TreeNode } from '@clawgym/core';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { computePpo } from '../../algo-ppo/src/ppo';
import { SharedPolicy } from './policy';
import { EmbeddedTrainer } from './trainer';

const config = { vocabSize: 300, dModel: 32, layers: 2, heads: 4, context: 128, mlpHidden: 64, valueHead: true, valueDetach: false };
const opt = { lr: 2e-2, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, gradClip: 1, warmupSteps: 2, valueLrScale: 3 };
let seed = 11;
const rand = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
const ids = (n: number) => Int32Array.from({ length: n }, () => Math.floor(rand() * 300));
const node = (id: number, parent: number, kind: TreeNode['kind'], n: number, sampling?: TreeNode['sampling']): TreeNode => ({
  id, parent, kind, tokens: ids(n), callIndex: 0,
  ...(kind === 'generated' ? { logprobs: Float32Array.from({ length: n }, () => -1 - 5 * rand()) } : {}), ...(sampling ? { sampling } : {}),
});

/** A branching tree; one of its replies sampled at temperature 0.7, top-p 0.9 (scored under that distribution). */
function tree(rolloutId: string, reward: number): RolloutTree {
  return {
    rolloutId, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward, auxiliaryRoots: [], filterCounts: {},
    nodes: [
      node(0, -1, 'inserted', 20), node(1, 0, 'generated', 12), node(2, 1, 'inserted', 9),
      node(3, 2, 'generated', 10, { temperature: 0.7, topP: 0.9 }), node(4, 1, 'generated', 7), node(5, 0, 'inserted', 4), node(6, 5, 'generated', 15),
    ],
  };
}
const trees = Array.from({ length: 6 }, (_, i) => tree(`r${i}`, i % 3 === 0 ? 1 : 0));

const made: EmbeddedTrainer[] = [];
function trainer(worker: boolean): { policy: SharedPolicy; t: EmbeddedTrainer } {
  const policy = new SharedPolicy(config, cpuKernels(), 5);
  const t = new EmbeddedTrainer(policy, opt, { worker });
  made.push(t);
  return { policy, t };
}
afterAll(async () => { await Promise.all(made.map((t) => t.close())); });

async function ppoBatch(t: EmbeddedTrainer, epochs: number, policyLoss: PolicyLoss = clippedTisLoss): Promise<TrainerBatch> {
  const advantages: AdvantageResult = computePpo({ algorithm: 'ppo', options: {}, trees, values: await t.values(trees) });
  return { trees, advantages, loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2, valueCoef: 0.5, epochs }, policyLoss };
}

/** Steps on fresh PPO batches (value targets, two epochs, a tempered reply); every byte of the checkpoint after them. */
async function train(t: EmbeddedTrainer, steps: number, policyLoss?: PolicyLoss) {
  const metrics = [];
  for (let s = 0; s < steps; s++) metrics.push(await t.step(await ppoBatch(t, 2, policyLoss)));
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-worker-'));
  try {
    await t.save(dir);
    return { metrics, model: readFileSync(join(dir, 'model.safetensors')), optimizer: readFileSync(join(dir, 'optimizer.safetensors')), config: readFileSync(join(dir, 'config.json'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the embedded trainer\'s worker thread', () => {
  it('computes every step to the same floats as the main thread: weights, optimiser state, step count and metrics byte for byte', async () => {
    const inThread = await train(trainer(false).t, 3);
    const inWorker = await train(trainer(true).t, 3);
    expect(inWorker.metrics).toEqual(inThread.metrics);
    expect(inWorker.metrics[0]!.valueLoss).toBeGreaterThan(0);
    expect(inWorker.metrics[2]!.clipFraction).toBeGreaterThan(0); // the second epochs clip: logpOld came back from the worker
    expect(inWorker.config).toBe(inThread.config);
    expect(inWorker.model.equals(inThread.model)).toBe(true);
    expect(inWorker.optimizer.equals(inThread.optimizer)).toBe(true);
  });

  it('leaves this thread free while a step computes: a callback queued before the step runs before it ends (the main-thread step runs it after)', async () => {
    const order = async (worker: boolean) => {
      const { t } = trainer(worker);
      const batch = await ppoBatch(t, 1);
      const seen: string[] = [];
      setImmediate(() => seen.push('callback'));
      await t.step(batch).then(() => seen.push('step'));
      await new Promise((ok) => setImmediate(ok));
      return seen;
    };
    expect(await order(true)).toEqual(['callback', 'step']);
    expect(await order(false)).toEqual(['step', 'callback']);
  });

  it('computes a plugin\'s policy loss in the main thread (the worker only has core\'s), with the same result', async () => {
    let calls = 0;
    const mine: PolicyLoss = { name: 'mine', compute: (input) => { calls++; return clippedTisLoss.compute(input); } };
    const viaPlugin = await train(trainer(true).t, 1, mine);
    expect(calls).toBe(2 * trees.length); // two epochs, every tree, here
    const reference = await train(trainer(false).t, 1);
    expect(viaPlugin.model.equals(reference.model)).toBe(true);
  });

  it('a worker that dies fails its step with CLAWGYM_TRAINER_WORKER_FAILED and applies nothing; the next step starts a new worker', async () => {
    const { policy, t } = trainer(true);
    const batch = await ppoBatch(t, 1);
    const before = new Map([...policy.model.params].map(([k, v]) => [k, v.slice()]));
    const step = t.step(batch);
    await t.close();
    await expect(step).rejects.toMatchObject({ code: ErrorCodes.TRAINER_WORKER_FAILED });
    expect(policy.version).toBe(0);
    for (const [k, v] of policy.model.params) expect(Buffer.from(v.buffer).equals(Buffer.from(before.get(k)!.buffer))).toBe(true);
    const again = await t.step(batch);
    const { t: ref } = trainer(false);
    expect(again).toEqual(await ref.step(await ppoBatch(ref, 1)));
    expect(policy.version).toBe(1);
  });
});
