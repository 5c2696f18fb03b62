import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byteChatMl } from '@clawgym/core';
import { EmbeddedEngine, EmbeddedTrainer, SharedPolicy } from '@clawgym/engine-embedded';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { TinkerServer, type TinkerServerOptions } from '../server';

/** The tiny embedded model the Tinker tests train and sample through the stand-in, and its optimizer. */
export const { tokenizer, chatTemplate } = byteChatMl();
export const config = { vocabSize: tokenizer.vocabSize, dModel: 16, layers: 1, heads: 2, context: 96, mlpHidden: 32, valueHead: false };
export const optimizer = { lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, gradClip: 1, warmupSteps: 2 };

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
