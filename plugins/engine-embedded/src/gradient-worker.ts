import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ClawGymError, ErrorCodes, type ErrorCode, type TrainMetrics } from '@clawgym/core';
import type { GradientJob } from './gradients';
import type { ModelConfig, Params } from './model';

/** A batch for the worker: the weights to differentiate at, and the job. */
export interface WorkerRequest {
  id: number;
  config: ModelConfig;
  params: Params;
  job: GradientJob;
  logpOld: Map<string, Float32Array>;
}

/** The worker's answer: the gradient and the batch's logpOld (filled where it was empty), or what failed. */
export type WorkerReply =
  | { id: number; grads: Params; metrics: TrainMetrics; logpOld: Map<string, Float32Array> }
  | { id: number; error: { message: string; code?: ErrorCode } };

/**
 * Started from the TypeScript sources (the repository's jest run): the worker compiles them as
 * jest does (swc, a dev dependency), with `@clawgym/core` mapped to core's sources too, so a
 * test exercises the code it reads. Built packages start `train-worker.js` directly.
 */
const FROM_SOURCES = `
const Module = require('node:module');
const { readFileSync } = require('node:fs');
const { workerData } = require('node:worker_threads');
const { transformSync } = require(require.resolve('@swc/core', { paths: [workerData.root] }));
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) { return resolve.call(this, request === '@clawgym/core' ? workerData.core : request, ...rest); };
const options = { jsc: { target: 'es2022', parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: false } }, module: { type: 'commonjs' } };
require.extensions['.ts'] = (m, filename) => m._compile(transformSync(readFileSync(filename, 'utf8'), { ...options, filename }).code, filename);
require(workerData.entry);
`;

/** A worker with no batch for this long stops (each holds its own V8 heap and wasm memory). */
const IDLE_MS = 60_000;

function startWorker(): Worker {
  if (__filename.endsWith('.js')) return new Worker(join(__dirname, 'train-worker.js'));
  const root = join(__dirname, '..', '..', '..');
  return new Worker(FROM_SOURCES, { eval: true, workerData: { root, core: join(root, 'core', 'src', 'index.ts'), entry: join(__dirname, 'train-worker.ts') } });
}

/**
 * The embedded trainer's worker thread: each RL batch's forward and backward passes run there,
 * so the thread that serves the proxy and the rollouts (and an engine sharing the trainer's
 * weights) keeps serving while a step computes. It is started at the first batch, holds no
 * state between batches, does not keep the process alive and stops after {@link IDLE_MS}
 * without a batch (a later one starts it again); a worker that dies fails its batch with
 * `CLAWGYM_TRAINER_WORKER_FAILED` and the next batch starts a new one.
 */
export class GradientWorker {
  private worker?: Worker;
  private idle?: NodeJS.Timeout;
  private nextId = 0;
  private readonly pending = new Map<number, { ok: (r: Extract<WorkerReply, { grads: Params }>) => void; fail: (err: unknown) => void }>();

  private get thread(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker();
    w.unref();
    w.on('message', (r: WorkerReply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.settled(r.id);
      if ('error' in r) p.fail(new ClawGymError(r.error.code ?? ErrorCodes.TRAINER_WORKER_FAILED, r.error.message));
      else p.ok(r);
    });
    const died = (why: string, cause?: unknown) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      const err = new ClawGymError(ErrorCodes.TRAINER_WORKER_FAILED, `the embedded trainer's worker thread ${why}`, {
        cause, hint: 'The step was not applied. Run with `trainerWorker: false` in the embedded options to compute steps in the main thread, and report it.',
      });
      for (const p of this.pending.values()) p.fail(err);
      this.pending.clear();
    };
    w.on('error', (err) => died(`failed: ${err.message}`, err));
    w.on('exit', (code) => died(`exited (code ${code}) during a step`));
    this.worker = w;
    return w;
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size > 0) return;
    this.worker?.unref();
    clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.close(), IDLE_MS).unref();
  }

  /** The gradient of `job` at a copy of `params` (the caller's arrays are not touched). */
  gradients(config: ModelConfig, params: Params, job: GradientJob, logpOld: Map<string, Float32Array>): Promise<{ grads: Params; metrics: TrainMetrics; logpOld: Map<string, Float32Array> }> {
    const w = this.thread;
    clearTimeout(this.idle);
    const id = this.nextId++;
    return new Promise((ok, fail) => {
      this.pending.set(id, { ok, fail });
      w.ref(); // a batch in flight keeps the process alive, as a step in this thread would
      const request: WorkerRequest = { id, config, params, job, logpOld };
      w.postMessage(request);
    });
  }

  /** Stop the thread (a batch in flight fails). */
  async close(): Promise<void> {
    clearTimeout(this.idle);
    const w = this.worker;
    if (w) await w.terminate();
  }
}
