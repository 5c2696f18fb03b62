import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { messageOf, type Engine } from '@clawgym/core';
import { EngineRequestError, readJson, send, type Json } from './http';
import { ServingState } from './serving-state';
import { generate, sglangControl } from './sglang';
import { completions, DiskTransfer, vllmControl } from './vllm';
import { DEFAULT_RELEASE, ENGINE_RELEASES, servesRoute, type EngineRelease, type EngineReleaseName } from './releases';

/** Options of {@link serveEngine}. */
export interface EngineServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The model name vLLM clients send (`--served-model-name`); default the engine's name. */
  servedModelName?: string;
  /** Largest request body, in bytes (default 16 MiB). */
  maxBodyBytes?: number;
  /**
   * Which SGLang to reproduce: `0025436e` (default, the strictest: `/pause_generation` takes no
   * body and aborts every request in flight; `/get_model_info`, no `/model_info`) or `modes`
   * (newer: pause modes abort | retract | in_place, `/model_info`). `/openapi.json` says which.
   */
  sglang?: '0025436e' | 'modes';
  /** SGLang `--enable-deterministic-inference`: `sampling_seed` seeds the sampling (otherwise it is ignored, as there); `/get_server_info` says which. */
  sglangDeterministic?: boolean;
  /** vLLM's weight-transfer routes with the `disk` backend (unreleased PR #52152); released vLLM has none (default off: the routes answer 404). */
  vllmDiskTransfer?: boolean;
  /** vLLM's `GET /weight_info` (PR #49040, 2026-07-18; default on); off reproduces an older vLLM's 404. */
  vllmWeightInfo?: boolean;
  /**
   * Answer as this server release does (`clawgym engine serve --as`): only its protocol's routes,
   * its pause, its refusals (422 where FastAPI validates). Overrides `sglang` and `vllmWeightInfo`.
   * None: both protocols on one port, as above.
   */
  as?: EngineReleaseName;
}

/** The behaviour the options ask for: the named release, else the default with the options' switches. */
export function releaseOf(o: EngineServerOptions): EngineRelease {
  if (o.as !== undefined) return ENGINE_RELEASES[o.as];
  return { ...DEFAULT_RELEASE, sglang: o.sglang ?? '0025436e', vllmWeightInfo: o.vllmWeightInfo !== false };
}

/** vLLM's `/openapi.json`, as far as a client probing for SGLang's routes reads it: theirs are absent. */
const VLLM_OPENAPI = { openapi: '3.1.0', info: { title: 'FastAPI', version: '0.1.0' }, paths: { '/v1/completions': { post: {} }, '/pause': { post: {} }, '/resume': { post: {} }, '/v1/load_lora_adapter': { post: {} } } };

/** A running engine server. */
export interface EngineServer {
  url: string;
  close(): Promise<void>;
}

/**
 * An in-process {@link Engine} (the embedded model) behind the HTTP protocols of the real
 * servers, so the vLLM and SGLang clients drive it unchanged and the distributed layout runs on
 * one machine: vLLM's token-id `POST /v1/completions` (`prompt` as ids, `return_token_ids`,
 * `logprobs`, streaming) and its weight-transfer routes (`/pause`, `/resume`, `/is_paused`,
 * `/init_weight_transfer_engine`, `/start_weight_update`, `/update_weights {update_info: {path}}`,
 * `/finish_weight_update`, `/weight_info`); SGLang's `POST /generate` (`input_ids`,
 * `return_logprob`, streaming, `meta_info.weight_version`) and `/pause_generation`,
 * `/continue_generation`, `/update_weights_from_disk`, `/model_info`, `/get_weight_version`;
 * `GET /metrics` (Prometheus: requests running, under both servers' metric names).
 * Weights load from the folder the trainer published (`engine.syncWeights`). While paused, calls
 * in flight stop between tokens and continue on the new weights with their cache (vLLM's `keep`).
 */
export async function serveEngine(engine: Engine, o: EngineServerOptions = {}): Promise<EngineServer> {
  const served = o.servedModelName ?? engine.name;
  const limit = o.maxBodyBytes ?? 16 * 1024 * 1024;
  const state = new ServingState(engine);
  const release = releaseOf(o);
  const disk = o.vllmDiskTransfer ? new DiskTransfer(state) : undefined;

  /** The routes that answer with one JSON object (or a line of text). */
  const control = async (route: string, query: URLSearchParams, body: Json): Promise<[number, unknown]> => {
    if (!servesRoute(release, route)) return [404, { detail: 'Not Found' }];
    if (route === 'GET /health') return [200, { status: 'ok' }];
    if (route === 'GET /openapi.json' && release.server === 'vllm') return [200, VLLM_OPENAPI];
    if (route === 'GET /v1/models') return [200, { object: 'list', data: [{ id: served, object: 'model', owned_by: 'clawgym', max_model_len: engine.contextLength ?? null }] }];
    return await sglangControl(state, served, release, route, body, o.sglangDeterministic === true)
      ?? await vllmControl(state, disk, { weightInfo: release.vllmWeightInfo, validates: release.validates }, route, query, body)
      ?? [404, { detail: 'Not Found' }];
  };

  /** A generation request, counted while it runs and abortable by the server's pause. */
  const generation = async (route: string, body: Json, res: ServerResponse, abort: AbortController) => {
    state.running++;
    const entry = { abort, byServer: false };
    state.inflight.add(entry);
    try {
      if (route === 'POST /generate') await generate(state, body, res, abort.signal, () => entry.byServer, o.sglangDeterministic === true);
      else await completions(state, served, body, res, abort.signal);
    } finally {
      state.inflight.delete(entry);
      state.running--;
    }
  };

  const server: Server = createServer((req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    if (state.dead) return void req.socket.destroy(); // its scheduler died: nothing answers
    void (async () => {
      try {
        const u = new URL(req.url ?? '/', 'http://engine');
        const route = `${req.method} ${u.pathname}`;
        const body = req.method === 'POST' ? await readJson(req, limit) : {};
        if ((route === 'POST /v1/completions' || route === 'POST /generate') && servesRoute(release, route)) return await generation(route, body, res, abort);
        if (route === 'GET /metrics') return void res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(state.metrics(served));
        const [status, reply] = await control(route, u.searchParams, body);
        if (state.dead) { state.resume(); server.closeAllConnections(); return; }
        if (typeof reply === 'string') res.writeHead(status, { 'content-type': 'text/plain' }).end(reply);
        else send(res, status, reply);
      } catch (err) {
        const status = err instanceof EngineRequestError ? err.status : 500;
        if (res.headersSent) {
          // Mid-stream: the error chunk both clients read as a server error.
          res.end(`data: ${JSON.stringify({ error: { message: messageOf(err), code: status } })}\n\n`);
        } else send(res, status, { error: { message: messageOf(err), type: status === 500 ? 'InternalServerError' : 'BadRequestError', code: status } });
      }
    })();
  });
  await new Promise<void>((ok, fail) => { server.once('error', fail); server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => ok()); });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((done) => { state.resume(); server.closeAllConnections(); server.close(() => done()); }),
  };
}
