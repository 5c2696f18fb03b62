import { tokensOf, type Engine, type GeneratedToken, type SamplingParams } from '@clawgym/core';
import { versionOf } from '@clawgym/engine-vllm';
import { EngineRequestError } from './http';

/** A generation request in flight, which a pause that aborts (SGLang 0025436e's) stops. */
export interface InFlight { abort: AbortController; byServer: boolean }

/**
 * What an engine server holds between requests: paused or not (calls in flight wait between
 * tokens and go on with the new weights and their cache, as vLLM's `keep`), the requests in
 * flight and running (for `GET /metrics`), and the weights it loads from the trainer's folders.
 */
export class ServingState {
  paused = false;
  private resumed: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Requests answered so far (their ids). */
  requests = 0;
  /** Generation requests being answered now (held ones too, while paused). */
  running = 0;
  readonly inflight = new Set<InFlight>();
  /** Generations past the model-update lock (SGLang's reader lock), paused ones included. */
  readers = 0;
  /** A weight update waiting for, or holding, the lock: new generations wait for it. */
  private writer: Promise<void> | undefined;
  private readersDone: (() => void) | undefined;
  /** Why the server is dead (its scheduler died), once it is: every request is then cut. */
  dead: string | undefined;

  constructor(readonly engine: Engine) {}

  /**
   * Run `load` under SGLang's model-update writer lock (tokenizer_manager.update_weights_from_disk
   * when not paused): it waits for every generation in flight to end and holds new ones until
   * the load is done, so the scheduler holds no request when it flushes its cache.
   */
  async exclusive<T>(load: () => Promise<T>): Promise<T> {
    while (this.writer) await this.writer;
    let release!: () => void;
    this.writer = new Promise<void>((r) => { release = r; });
    try {
      if (this.readers > 0) await new Promise<void>((r) => { this.readersDone = r; });
      return await load();
    } finally {
      this.writer = undefined;
      release();
    }
  }

  version(): string { return String(this.engine.policyVersion()); }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    let resolve!: () => void;
    this.resumed = { promise: new Promise<void>((r) => { resolve = r; }), resolve };
  }

  resume(): void {
    this.paused = false;
    this.resumed?.resolve();
    this.resumed = undefined;
  }

  /** Abort every generation in flight, as the server's own doing. */
  abortAll(): void {
    for (const r of this.inflight) { r.byServer = true; r.abort.abort(); }
  }

  /** Load full weights from `path`, under the version `label` names (else the next one). */
  async load(path: string, label: unknown): Promise<void> {
    const v = versionOf(label) ?? this.engine.policyVersion() + 1;
    if (!this.engine.syncWeights) throw new EngineRequestError(400, `engine ${this.engine.name} cannot load weights`);
    await this.engine.syncWeights({ path, version: v, kind: 'full' });
  }

  /** The engine's tokens, held between tokens while paused; stops when the client goes away. */
  async *tokens(ids: Int32Array, sampling: SamplingParams, signal: AbortSignal): AsyncGenerator<GeneratedToken> {
    while (this.writer) await this.writer; // the reader lock: not while a weight update waits or runs
    this.readers++;
    try {
      while (this.paused) await this.resumed!.promise;
      for await (const step of this.engine.generate({ promptIds: ids, sampling, signal })) {
        for (const t of tokensOf(step)) {
          yield t;
          while (this.paused) await this.resumed!.promise;
        }
      }
    } finally {
      if (--this.readers === 0) { this.readersDone?.(); this.readersDone = undefined; }
    }
  }

  /**
   * Prometheus text, under the names vLLM (`vllm:num_requests_running`) and SGLang
   * (`sglang:num_running_reqs`) export, so a dashboard or a test reads either kind the same way.
   */
  metrics(served: string): string {
    const label = `{model_name=${JSON.stringify(served)}}`;
    const gauge = (name: string, help: string, v: number) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}${label} ${v.toFixed(1)}\n`;
    return gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', this.running)
      + gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', 0)
      + gauge('sglang:num_running_reqs', 'The number of running requests.', this.running)
      + gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', 0);
  }
}
