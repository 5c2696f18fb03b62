import type { ServerResponse } from 'node:http';
import { messageOf, type SamplingParams } from '@clawgym/core';
import { bodyAbsent, checkLength, type Json, num, promptIds, send } from './http';
import { unprocessable, type EngineRelease } from './releases';
import type { ServingState } from './serving-state';

/**
 * The API fields of SGLang's SamplingParams (python/sglang/srt/sampling/sampling_params.py @
 * 00c17caf). The tokenizer manager builds `SamplingParams(**sampling_params)`: any other key is a
 * TypeError that `/generate` does not catch (it catches ValueError; http_server.py @ 0025436e).
 */
const SAMPLING_KEYS = new Set(['max_new_tokens', 'stop', 'stop_token_ids', 'stop_regex', 'temperature', 'top_p', 'top_k', 'min_p', 'frequency_penalty', 'presence_penalty', 'repetition_penalty', 'min_new_tokens', 'n', 'json_schema', 'regex', 'ebnf', 'structural_tag', 'ignore_eos', 'skip_special_tokens', 'spaces_between_special_tokens', 'no_stop_trim', 'custom_params', 'stream_interval', 'logit_bias', 'sampling_seed']);

/** SGLang's answer to a request its SamplingParams cannot take: 500, or a stream cut after its 200. */
function typeError(res: ServerResponse, stream: boolean): void {
  if (stream) { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.flushHeaders(); res.destroy(); return; }
  res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
}

/**
 * SGLang's `POST /generate`: `input_ids`, `return_logprob`, streaming, `meta_info.weight_version`;
 * an aborted request ends with `finish_reason: {type: "abort"}`. `sampling_seed` seeds the
 * sampling only with `deterministic` (`--enable-deterministic-inference`), as in SGLang.
 */
export async function generate(state: ServingState, body: Json, res: ServerResponse, signal: AbortSignal, killed?: () => boolean, deterministic = false): Promise<void> {
  const { engine } = state;
  const ids = promptIds(body.input_ids, 'input_ids');
  checkLength(engine, ids);
  const sp = (body.sampling_params ?? {}) as Json;
  if (Object.keys(sp).some((k) => !SAMPLING_KEYS.has(k))) return typeError(res, body.stream === true);
  const stops = new Set<number>([...engine.chatTemplate.stopIds, ...(Array.isArray(sp.stop_token_ids) ? sp.stop_token_ids : [])]);
  const seed = deterministic && Number.isInteger(sp.sampling_seed) ? { seed: sp.sampling_seed as number } : {};
  const sampling: SamplingParams = { maxTokens: Math.max(1, num(sp.max_new_tokens, 128)), temperature: num(sp.temperature, 1), topP: num(sp.top_p, 1), stopIds: [...stops], ...seed };
  const rid = `gen-${++state.requests}`;
  const out: number[] = [];
  const entries: [number, number, null][] = [];
  const chunk = (finished: boolean) => ({
    text: engine.tokenizer.decode(out), output_ids: [...out],
    meta_info: {
      id: rid, prompt_tokens: ids.length, completion_tokens: out.length, cached_tokens: 0, weight_version: state.version(),
      finish_reason: finished ? (out.length && stops.has(out[out.length - 1]!) ? { type: 'stop', matched: out[out.length - 1] } : { type: 'length', length: out.length }) : null,
      ...(body.return_logprob === true ? { output_token_logprobs: entries } : {}),
    },
  });
  const stream = body.stream === true;
  if (stream) { res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }); res.flushHeaders(); }
  let finished = false;
  for await (const t of state.tokens(ids, sampling, signal)) {
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

/** FastAPI's `/openapi.json`, as far as a client reads it to learn what this SGLang takes. */
function openapi(legacy: boolean) {
  return {
    openapi: '3.1.0', info: { title: 'FastAPI', version: '0.1.0' },
    paths: {
      '/generate': { post: {} }, '/update_weights_from_disk': { post: {} }, '/continue_generation': { post: {} },
      '/get_model_info': { get: {} }, '/get_weight_version': { get: {} }, '/load_lora_adapter': { post: {} },
      '/pause_generation': { post: legacy ? { responses: { 200: {} } } : { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/PauseGenerationReqInput' } } } } } },
      ...(legacy ? {} : { '/model_info': { get: {} } }),
    },
  };
}

/**
 * What SGLang does when its scheduler raises: the process tree is killed, so every connection
 * drops and nothing answers again (`Scheduler hit an exception` in its log).
 */
function schedulerDies(state: ServingState, why: string): undefined {
  state.dead = why;
  process.stderr.write(`[engine serve] Scheduler hit an exception: ${why}\n`);
  return undefined;
}

/**
 * SGLang's control routes. `legacy` reproduces 0025436e: `/pause_generation` reads no body and
 * aborts everything in flight; `/get_model_info`, no `/model_info`. Otherwise pause modes
 * abort | retract | in_place and `/model_info`, and what comes with them
 * (sgl-project/sglang@00096b5f tokenizer_communicator_mixin.py, and update_weights_from_disk in
 * tokenizer_manager.py alike, skip the model-update lock while paused; @018c9109
 * scheduler_update_weights_mixin.py asserts the cache flush after every update from disk):
 * an update while paused with a request retracted or held kills the
 * server (fixes #32153, #33784 open). Unpaused, an update waits for the requests in flight.
 * With `release.validates`, bodies are refused as FastAPI refuses them (422); with
 * `release.pauseBody` (8905cbd4) pause and continue need a body; with `release.weightVersionGone`
 * `/get_weight_version` answers 404 (releases.ts says where each was read).
 * Answers `undefined` for a route it does not serve, or when the server just died.
 */
export async function sglangControl(state: ServingState, served: string, release: EngineRelease, route: string, body: Json, deterministic = false): Promise<[number, unknown] | undefined> {
  const legacy = release.sglang === '0025436e';
  const refused = refusal(release, route, body);
  if (refused) return refused;
  switch (route) {
    // Every ServerArgs field (http_server.py @ 0025436e); the ones a client reads, here.
    case 'GET /get_server_info': return [200, { model_path: served, served_model_name: served, weight_version: state.version(), enable_deterministic_inference: deterministic, enable_lora: false, internal_states: [] }];
    case 'POST /pause_generation':
      if (legacy) {
        // 0025436e reads no body: whatever mode was asked for, everything in flight is aborted.
        state.abortAll();
      } else if (body.mode !== undefined && !['abort', 'retract', 'in_place'].includes(body.mode)) {
        return [400, { error: { message: `invalid pause mode ${String(body.mode)}` } }];
      } else if ((body.mode ?? 'abort') === 'abort') {
        state.abortAll();
      }
      state.pause();
      return [200, { message: 'Generation paused successfully.', status: 'ok' }];
    case 'GET /openapi.json': return [200, openapi(legacy)];
    case 'GET /get_model_info': return [200, { model_path: served, tokenizer_path: served, is_generation: true, preferred_sampling_params: null, weight_version: state.version() }];
    case 'POST /continue_generation': state.resume(); return [200, { message: 'Generation continued successfully.', status: 'ok' }];
    // Scheduler.flush_cache: refused while any request is queued or running.
    case 'POST /flush_cache': return state.readers > 0 ? [400, `Cache not flushed because there are pending requests. #queue-req: ${state.paused ? state.readers : 0}, #running-req: ${state.paused ? 0 : state.readers}\n`] : [200, 'Cache flushed.\n'];
    case 'GET /model_info':
      if (legacy) return [404, { detail: 'Not Found' }];
      return [200, { model_path: served, is_generation: true, weight_version: state.version() }];
    case 'POST /load_lora_adapter':
    case 'POST /unload_lora_adapter':
      // As SGLang launched without --enable-lora (what /get_server_info says): the tokenizer
      // manager's ValueError, answered as {success: false} with 400 (8905cbd4
      // tokenizer_control_mixin.py:572-575, http_server.py:1466-1474; a8fcbf6f
      // tokenizer_communicator_mixin.py:508). Only with --as: before it, the stand-in had no such route.
      if (release.server !== 'sglang') return undefined;
      return [400, { success: false, error_message: 'LoRA is not enabled. Please set `--enable-lora` to enable LoRA.', loaded_adapters: null }];
    case 'GET /get_weight_version':
      if (release.weightVersionGone) return [404, { detail: "Endpoint '/get_weight_version' or '/weight_version' is deprecated. Please use '/model_info' instead." }];
      return [200, { weight_version: state.version() }];
    case 'POST /update_weights_from_disk': {
      if (typeof body.model_path !== 'string' || !body.model_path) return [400, { success: false, message: 'model_path is required', num_paused_requests: 0 }];
      try {
        if (!state.paused) await state.exclusive(() => state.load(String(body.model_path), body.weight_version));
        else {
          // Paused, the update skips the lock; the scheduler then flushes its cache, which fails
          // while a retracted (queued) or held request remains, and the assert kills it.
          if (!legacy && state.readers > 0) return schedulerDies(state, 'AssertionError: Cache flush failed after updating weights');
          await state.load(body.model_path, body.weight_version);
        }
      } catch (err) {
        return [400, { success: false, message: `Failed to update weights: ${messageOf(err)}`, num_paused_requests: 0 }];
      }
      return [200, { success: true, message: `Succeeded to update model weights. Weight version updated to ${state.version()}.`, num_paused_requests: 0 }];
    }
    default: return undefined;
  }
}

const PAUSE_MODES = ['abort', 'retract', 'in_place'] as const;

/** What FastAPI refuses before SGLang's handler runs, where the release validates (422). */
function refusal(release: EngineRelease, route: string, body: Json): [number, unknown] | undefined {
  if (!release.validates) return undefined;
  if (route === 'POST /update_weights_from_disk' && typeof body.model_path !== 'string') return unprocessable(bodyAbsent(body) ? ['body'] : ['body', 'model_path'], 'missing', bodyAbsent(body) ? null : body);
  // LoadLoRAAdapterReqInput: lora_name and lora_path required; UnloadLoRAAdapterReqInput: lora_name.
  const lora = route === 'POST /load_lora_adapter' ? ['lora_name', 'lora_path'] : route === 'POST /unload_lora_adapter' ? ['lora_name'] : [];
  const missing = lora.find((f) => typeof body[f] !== 'string');
  if (missing) return unprocessable(bodyAbsent(body) ? ['body'] : ['body', missing], 'missing', bodyAbsent(body) ? null : body);
  if (route !== 'POST /pause_generation' && route !== 'POST /continue_generation') return undefined;
  if (!release.pauseBody) return undefined; // 0025436e reads no body: anything goes
  if (bodyAbsent(body)) return unprocessable(['body'], 'missing', null);
  if (route === 'POST /pause_generation' && body.mode !== undefined && !(PAUSE_MODES as readonly unknown[]).includes(body.mode)) return unprocessable(['body', 'mode'], 'literal_error', body.mode, PAUSE_MODES);
  return undefined;
}
