import { tokensOf, type Engine, type GeneratedToken, type SamplingParams } from '@clawgym/core';
import { versionOf } from '../weight-sync';
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

  constructor(readonly engine: Engine) {}

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
    while (this.paused) await this.resumed!.promise;
    for await (const step of this.engine.generate({ promptIds: ids, sampling, signal })) {
      for (const t of tokensOf(step)) {
        yield t;
        while (this.paused) await this.resumed!.promise;
      }
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
