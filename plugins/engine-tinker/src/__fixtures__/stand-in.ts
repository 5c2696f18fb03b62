import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteChatMl, clippedTisLoss, type RolloutTree, type TrainerBatch } from '@clawgym/core';
import { computeGrpo } from '@clawgym/algo-grpo';
import { EmbeddedEngine, EmbeddedTrainer, SharedPolicy } from '@clawgym/engine-embedded';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { TinkerServer, type TinkerServerOptions } from '@clawgym/standins';

/** The tiny embedded model the Tinker tests train and sample through the stand-in, and its optimizer. */
export const { tokenizer, chatTemplate } = byteChatMl();
export const config = { vocabSize: tokenizer.vocabSize, dModel: 16, layers: 1, heads: 2, context: 96, mlpHidden: 32, valueHead: false };
export const optimizer = { lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, gradClip: 1, warmupSteps: 2 };

/** A GRPO step over two one-call rollouts of the same three prompt and three generated tokens (rewards 1 and 0). */
const tree: RolloutTree = {
  rolloutId: 'r', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1, auxiliaryRoots: [], filterCounts: {},
  nodes: [
    { id: 0, parent: -1, kind: 'inserted', tokens: Int32Array.from([10, 11, 12]), callIndex: 0 },
    { id: 1, parent: 0, kind: 'generated', tokens: Int32Array.from([40, 41, 42]), logprobs: Float32Array.from([-2, -2.3, -2.6]), callIndex: 0 },
  ],
};
const other: RolloutTree = { ...tree, rolloutId: 'q', reward: 0 };
export const grpoBatch: TrainerBatch = { trees: [tree, other], advantages: computeGrpo({ algorithm: 'grpo', options: {}, trees: [tree, other] }), loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss };

/**
 * The Tinker-API stand-in over that model (initial weights seed 5) with a data folder of its own,
 * as `clawgym trainer serve` runs it; `stop` ends it and removes the folder. Its `trainer` may be
 * changed before the first request (a slow save, say).
 */
export async function startStandIn(o: Partial<TinkerServerOptions> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'clawgym-tinker-'));
  const policy = new SharedPolicy(config, cpuKernels(), 5);
  const trainer = new EmbeddedTrainer(policy, { ...optimizer, valueLrScale: 1 });
  const server = new TinkerServer({ trainer, engine: new EmbeddedEngine(policy, tokenizer, chatTemplate, 5), dataDir, baseModel: 'embedded', futureWaitMs: 2000, ...o });
  const url = await server.start();
  const stop = async () => { await server.stop(); rmSync(dataDir, { recursive: true, force: true }); };
  return { url, policy, trainer, dataDir, server, stop };
}
