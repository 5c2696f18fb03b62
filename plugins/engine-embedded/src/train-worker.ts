/**
 * The embedded trainer's worker thread (see gradient-worker.ts): it computes the gradient of
 * each RL batch it is sent on the weights sent with it, with the `cpu` kernels (@clawgym/kernels-cpu) and core's
 * `clipped-tis` loss, and sends the gradient back. It never holds weights between batches and
 * never applies an update: the trainer's thread does, so the weights an engine in that thread
 * samples from change only between two of its callbacks.
 */
import { parentPort } from 'node:worker_threads';
import { ClawGymError, clippedTisLoss, type ComputeKernels } from '@clawgym/core';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { treeGradients } from './gradients';
import { Transformer } from './model';
import type { WorkerReply, WorkerRequest } from './gradient-worker';

let kernels: ComputeKernels | undefined;

parentPort!.on('message', (r: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    kernels ??= cpuKernels();
    const { grads, metrics } = treeGradients(new Transformer(r.config, r.params, kernels), r.job, r.logpOld, clippedTisLoss);
    reply = { id: r.id, grads, metrics, logpOld: r.logpOld };
    parentPort!.postMessage(reply, [...grads.values()].map((g) => g.buffer as ArrayBuffer));
  } catch (err) {
    reply = { id: r.id, error: { message: err instanceof Error ? err.message : String(err), ...(err instanceof ClawGymError ? { code: err.code } : {}) } };
    parentPort!.postMessage(reply);
  }
});
