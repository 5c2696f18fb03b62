import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine, GeneratedToken, SamplingParams } from '../../contracts/engine';
import { messageOf } from '../../errors';
import { versionOf } from '../weight-sync';
import { tokensOf } from '../token-steps';

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
  /** vLLM's weight-transfer routes with the `disk` backend (unreleased PR #52152); released vLLM has none (default off: the routes answer 404). */
  vllmDiskTransfer?: boolean;
  /** vLLM's `GET /weight_info` (PR #49040, 2026-07-18; default on); off reproduces an older vLLM's 404. */
  vllmWeightInfo?: boolean;
}

/** A running engine server. */
export interface EngineServer {
  url: string;
  close(): Promise<void>;
}

type Json = Record<string, any>;

class HttpError extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

async function readJson(req: IncomingMessage, limit: number): Promise<Json> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw new HttpError(413, `request body over ${limit} bytes`);
    chunks.push(c as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (!raw) return {};
  try { return JSON.parse(raw) as Json; } catch { throw new HttpError(400, 'request body is not JSON'); }
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

/** Token ids of a prompt: a list of integers (vLLM also takes a batch of one). */
function promptIds(v: unknown, field: string): Int32Array {
  const ids = Array.isArray(v) && v.length === 1 && Array.isArray(v[0]) ? v[0] : v;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => Number.isInteger(x) && x >= 0)) {
    throw new HttpError(400, `${field} must be a non-empty list of token ids (this server takes token ids, not text)`);
  }
  return Int32Array.from(ids as number[]);
}

/** A prompt the engine would refuse: a 400, as vLLM answers (not a 5xx, which says the server is broken). */
function checkLength(engine: Engine, ids: Int32Array): void {
  if (engine.contextLength !== undefined && ids.length >= engine.contextLength) {
    throw new HttpError(400, `This model's maximum context length is ${engine.contextLength} tokens. However, you requested ${ids.length} tokens in the prompt.`);
  }
}

const num = (v: unknown, dflt: number) => (typeof v === 'number' && Number.isFinite(v) ? v : dflt);

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
  let paused = false;
  let resumed: { promise: Promise<void>; resolve: () => void } | undefined;
  let pendingPath: string | undefined;
  let updating = false;
  let requests = 0;
  /** Generation requests being answered now (held ones too, while paused): `GET /metrics`. */
  let running = 0;
  const version = () => String(engine.policyVersion());
  const legacySglang = (o.sglang ?? '0025436e') === '0025436e';
  /** Generation requests in flight, which SGLang 0025436e's pause aborts. */
  const inflight = new Set<{ abort: AbortController; byServer: boolean }>();

  const pause = () => {
    if (paused) return;
    paused = true;
    let resolve!: () => void;
    resumed = { promise: new Promise<void>((r) => { resolve = r; }), resolve };
  };
  const resume = () => {
    paused = false;
    resumed?.resolve();
    resumed = undefined;
  };
  const load = async (path: string, label: unknown) => {
    const v = versionOf(label) ?? engine.policyVersion() + 1;
    if (!engine.syncWeights) throw new HttpError(400, `engine ${engine.name} cannot load weights`);
    await engine.syncWeights({ path, version: v, kind: 'full' });
  };

  /** The engine's tokens, held between tokens while paused; stops when the client goes away. */
  async function* tokens(ids: Int32Array, sampling: SamplingParams, signal: AbortSignal): AsyncGenerator<GeneratedToken> {
    while (paused) await resumed!.promise;
    for await (const step of engine.generate({ promptIds: ids, sampling, signal })) {
      for (const t of tokensOf(step)) {
        yield t;
        while (paused) await resumed!.promise;
      }
    }
  }

  const finishOf = (out: number[], stops: Set<number>) => (out.length && stops.has(out[out.length - 1]!) ? 'stop' : 'length');

  async function completions(body: Json, req: IncomingMessage, res: ServerResponse, signal: AbortSignal) {
    if (body.model !== undefined && body.model !== served) throw new HttpError(404, `The model \`${body.model}\` does not exist.`);
    const ids = promptIds(body.prompt, 'prompt');
    checkLength(engine, ids);
    const stops = new Set<number>([...engine.chatTemplate.stopIds, ...(Array.isArray(body.stop_token_ids) ? body.stop_token_ids : [])]);
    const sampling: SamplingParams = {
      maxTokens: Math.max(1, num(body.max_tokens, 16)), temperature: num(body.temperature, 1), topP: num(body.top_p, 1),
      stopIds: [...stops], ...(Number.isInteger(body.seed) ? { seed: body.seed } : {}),
    };
    const withLogprobs = body.logprobs !== undefined && body.logprobs !== null;
    const withIds = body.return_token_ids === true;
    const id = `cmpl-${++requests}`;
    const created = Math.floor(Date.now() / 1000);
    const out: number[] = [];
    const lps: number[] = [];
    const text = (tid: number) => engine.tokenizer.decode([tid]);
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      for await (const t of tokens(ids, sampling, signal)) {
        out.push(t.tokenId);
        const last = stops.has(t.tokenId) || out.length >= sampling.maxTokens;
        res.write(`data: ${JSON.stringify({
          id, object: 'text_completion', created, model: served,
          choices: [{
            index: 0, text: text(t.tokenId),
            logprobs: withLogprobs ? { text_offset: [out.length - 1], token_logprobs: [t.logprob], tokens: [text(t.tokenId)], top_logprobs: null } : null,
            finish_reason: last ? finishOf(out, stops) : null, stop_reason: last && stops.has(t.tokenId) ? t.tokenId : null,
            ...(withIds ? { token_ids: [t.tokenId], prompt_token_ids: out.length === 1 ? [...ids] : null } : {}),
          }],
        })}\n\n`);
        if (last) break;
      }
      if (out.length === 0 || !(stops.has(out[out.length - 1]!) || out.length >= sampling.maxTokens)) {
        // The engine stopped early (its context is full): the last chunk says why.
        res.write(`data: ${JSON.stringify({ id, object: 'text_completion', created, model: served, choices: [{ index: 0, text: '', logprobs: withLogprobs ? { text_offset: [], token_logprobs: [], tokens: [], top_logprobs: null } : null, finish_reason: 'length', ...(withIds ? { token_ids: [] } : {}) }] })}\n\n`);
      }
      res.end('data: [DONE]\n\n');
      return;
    }
    for await (const t of tokens(ids, sampling, signal)) {
      out.push(t.tokenId);
      lps.push(t.logprob);
      if (stops.has(t.tokenId) || out.length >= sampling.maxTokens) break;
    }
    send(res, 200, {
      id, object: 'text_completion', created, model: served,
      choices: [{
        index: 0, text: engine.tokenizer.decode(out),
        logprobs: withLogprobs ? { text_offset: out.map((_, i) => i), token_logprobs: lps, tokens: out.map(text), top_logprobs: null } : null,
        finish_reason: finishOf(out, stops), ...(withIds ? { token_ids: out, prompt_token_ids: [...ids] } : {}),
      }],
      usage: { prompt_tokens: ids.length, completion_tokens: out.length, total_tokens: ids.length + out.length },
    });
  }

  async function generate(body: Json, res: ServerResponse, signal: AbortSignal, killed?: () => boolean) {
    const ids = promptIds(body.input_ids, 'input_ids');
    checkLength(engine, ids);
    const sp = (body.sampling_params ?? {}) as Json;
    const stops = new Set<number>([...engine.chatTemplate.stopIds, ...(Array.isArray(sp.stop_token_ids) ? sp.stop_token_ids : [])]);
    const sampling: SamplingParams = { maxTokens: Math.max(1, num(sp.max_new_tokens, 128)), temperature: num(sp.temperature, 1), topP: num(sp.top_p, 1), stopIds: [...stops] };
    const rid = `gen-${++requests}`;
    const out: number[] = [];
    const entries: [number, number, null][] = [];
    const chunk = (finished: boolean) => ({
      text: engine.tokenizer.decode(out), output_ids: [...out],
      meta_info: {
        id: rid, prompt_tokens: ids.length, completion_tokens: out.length, cached_tokens: 0, weight_version: version(),
        finish_reason: finished ? (out.length && stops.has(out[out.length - 1]!) ? { type: 'stop', matched: out[out.length - 1] } : { type: 'length', length: out.length }) : null,
        ...(body.return_logprob === true ? { output_token_logprobs: entries } : {}),
      },
    });
    const stream = body.stream === true;
    if (stream) { res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }); res.flushHeaders(); }
    let finished = false;
    for await (const t of tokens(ids, sampling, signal)) {
      out.push(t.tokenId);
      entries.push([t.logprob, t.tokenId, null]);
      finished = stops.has(t.tokenId) || out.length >= sampling.maxTokens;
      if (stream) res.write(`data: ${JSON.stringify(chunk(finished))}\n\n`);
      if (finished) break;
    }
    if (killed?.()) {
      // SGLang's abort: the stream ends with finish_reason {type: "abort"}.
      const c = chunk(true);
      const last = { ...c, meta_info: { ...c.meta_info, finish_reason: { type: 'abort', message: 'Abort in waiting queue or running batch (pause_generation)' } } };
      if (!stream) { send(res, 200, last); return; }
      res.end(`data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`);
      return;
    }
    if (!stream) { send(res, 200, chunk(true)); return; }
    if (!finished) res.write(`data: ${JSON.stringify(chunk(true))}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  /**
   * Prometheus text, under the names vLLM (`vllm:num_requests_running`) and SGLang
   * (`sglang:num_running_reqs`) export, so a dashboard or a test reads either kind the same way.
   */
  const metrics = () => {
    const label = `{model_name=${JSON.stringify(served)}}`;
    const gauge = (name: string, help: string, v: number) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}${label} ${v.toFixed(1)}\n`;
    return gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', running)
      + gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', 0)
      + gauge('sglang:num_running_reqs', 'The number of running requests.', running)
      + gauge('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', 0);
  };

  /** vLLM's weight-transfer routes with the `disk` backend (vllm/distributed/weight_transfer/disk_engine.py @ 3b98defb, draft PR #52152). */
  async function diskTransfer(route: string, body: Json): Promise<[number, unknown]> {
    switch (route) {
      case 'POST /init_weight_transfer_engine':
        if (body.init_info === undefined || body.init_info === null) return [400, { detail: "Missing 'init_info' in request body" }];
        return [200, { message: 'Weight transfer initialized' }];
      case 'POST /start_weight_update':
        if (updating) return [500, { error: 'A shared-disk weight update is already active' }];
        updating = true;
        pendingPath = undefined;
        return [200, { message: 'Weight update started' }];
      case 'POST /update_weights': {
        const path = body.update_info?.path;
        if (body.update_info === undefined) return [400, { detail: "Missing 'update_info' in request body" }];
        if (!updating) return [500, { error: 'start_weight_update must be called before loading a checkpoint' }];
        if (typeof path !== 'string' || !path.startsWith('/')) { updating = false; return [500, { error: '`path` must be a non-empty absolute local directory' }]; }
        pendingPath = path;
        return [200, { message: 'Weights updated' }];
      }
      case 'POST /finish_weight_update': {
        if (!updating) return [500, { error: 'No shared-disk weight update is active' }];
        updating = false;
        if (!pendingPath) return [500, { error: 'No checkpoint was loaded during the shared-disk update session' }];
        try { await load(pendingPath, body.weight_version); } catch (err) { return [500, { error: messageOf(err) }]; }
        return [200, { message: 'Weight update finished' }];
      }
      default: return [404, { detail: 'Not Found' }];
    }
  }

  /** FastAPI's `/openapi.json`, as far as a client reads it to learn what this SGLang takes. */
  const openapi = () => ({
    openapi: '3.1.0', info: { title: 'FastAPI', version: '0.1.0' },
    paths: {
      '/generate': { post: {} }, '/update_weights_from_disk': { post: {} }, '/continue_generation': { post: {} },
      '/get_model_info': { get: {} }, '/get_weight_version': { get: {} }, '/load_lora_adapter': { post: {} },
      '/pause_generation': { post: legacySglang ? { responses: { 200: {} } } : { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/PauseGenerationReqInput' } } } } } },
      ...(legacySglang ? {} : { '/model_info': { get: {} } }),
    },
  });

  /** The routes that answer with one JSON object. */
  async function control(route: string, query: URLSearchParams, body: Json): Promise<[number, unknown]> {
    switch (route) {
      case 'GET /health': return [200, { status: 'ok' }];
      case 'GET /v1/models': return [200, { object: 'list', data: [{ id: served, object: 'model', owned_by: 'clawgym', max_model_len: engine.contextLength ?? null }] }];
      // SGLang
      case 'POST /pause_generation':
        if (legacySglang) {
          // 0025436e reads no body: whatever mode was asked for, everything in flight is aborted.
          for (const r of inflight) { r.byServer = true; r.abort.abort(); }
        } else if (body.mode !== undefined && !['abort', 'retract', 'in_place'].includes(body.mode)) {
          return [400, { error: { message: `invalid pause mode ${String(body.mode)}` } }];
        } else if ((body.mode ?? 'abort') === 'abort') {
          for (const r of inflight) { r.byServer = true; r.abort.abort(); }
        }
        pause();
        return [200, { message: 'Generation paused successfully.', status: 'ok' }];
      case 'GET /openapi.json': return [200, openapi()];
      case 'GET /get_model_info': return [200, { model_path: served, tokenizer_path: served, is_generation: true, preferred_sampling_params: null, weight_version: version() }];
      case 'POST /continue_generation': resume(); return [200, { message: 'Generation continued successfully.', status: 'ok' }];
      case 'POST /flush_cache': return [200, 'Cache flushed.\n'];
      case 'GET /model_info':
        if (legacySglang) return [404, { detail: 'Not Found' }];
        return [200, { model_path: served, is_generation: true, weight_version: version() }];
      case 'GET /get_weight_version': return [200, { weight_version: version() }];
      case 'POST /update_weights_from_disk': {
        if (typeof body.model_path !== 'string' || !body.model_path) return [400, { success: false, message: 'model_path is required', num_paused_requests: 0 }];
        try {
          await load(body.model_path, body.weight_version);
        } catch (err) {
          return [400, { success: false, message: `Failed to update weights: ${messageOf(err)}`, num_paused_requests: 0 }];
        }
        return [200, { success: true, message: `Succeeded to update model weights. Weight version updated to ${version()}.`, num_paused_requests: 0 }];
      }
      // vLLM
      case 'GET /weight_info': return o.vllmWeightInfo === false ? [404, { detail: 'Not Found' }] : [200, { weight_version: version() }];
      case 'POST /init_weight_transfer_engine':
      case 'POST /start_weight_update':
      case 'POST /update_weights':
      case 'POST /finish_weight_update':
        // Released vLLM has no disk backend: a folder of full weights has no route to arrive by.
        if (!o.vllmDiskTransfer) return [404, { detail: 'Not Found' }];
        return diskTransfer(route, body);
      case 'POST /pause': {
        const mode = query.get('mode') ?? 'abort';
        if (!['abort', 'wait', 'keep'].includes(mode)) return [400, { error: `invalid pause mode ${mode}` }];
        pause();
        return [200, { status: 'paused' }];
      }
      case 'POST /resume': resume(); return [200, { status: 'resumed' }];
      case 'GET /is_paused': return [200, { is_paused: paused }];
      case 'POST /v1/load_lora_adapter':
        return [400, { error: { message: 'the embedded engine serves whole weights: LoRA adapters are not supported (sync with the full-weight routes)', type: 'BadRequestError', code: 400 } }];
      default: return [404, { detail: 'Not Found' }];
    }
  }

  const server: Server = createServer((req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    void (async () => {
      try {
        const u = new URL(req.url ?? '/', 'http://engine');
        const route = `${req.method} ${u.pathname}`;
        const body = req.method === 'POST' ? await readJson(req, limit) : {};
        if (route === 'POST /v1/completions' || route === 'POST /generate') {
          running++;
          const entry = { abort, byServer: false };
          inflight.add(entry);
          try {
            return route === 'POST /generate' ? await generate(body, res, abort.signal, () => entry.byServer) : await completions(body, req, res, abort.signal);
          } finally {
            inflight.delete(entry);
            running--;
          }
        }
        if (route === 'GET /metrics') return void res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics());
        const [status, reply] = await control(route, u.searchParams, body);
        if (typeof reply === 'string') res.writeHead(status, { 'content-type': 'text/plain' }).end(reply);
        else send(res, status, reply);
      } catch (err) {
        const status = err instanceof HttpError ? err.status : 500;
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
    close: () => new Promise<void>((done) => { resume(); server.closeAllConnections(); server.close(() => done()); }),
  };
}
