import type { ServerResponse } from 'node:http';
import { messageOf, type SamplingParams } from '@clawgym/core';
import { checkLength, EngineRequestError, type Json, num, promptIds, send } from './http';
import { unprocessable } from './releases';
import type { ServingState } from './serving-state';

const PAUSE_MODES = ['abort', 'wait', 'keep'] as const;

const finishOf = (out: number[], stops: Set<number>) => (out.length && stops.has(out[out.length - 1]!) ? 'stop' : 'length');

/** vLLM's token-id `POST /v1/completions`: `prompt` as ids, `return_token_ids`, `logprobs`, streaming. */
export async function completions(state: ServingState, served: string, body: Json, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const { engine } = state;
  if (body.model !== undefined && body.model !== served) throw new EngineRequestError(404, `The model \`${body.model}\` does not exist.`);
  const ids = promptIds(body.prompt, 'prompt');
  checkLength(engine, ids);
  const stops = new Set<number>([...engine.chatTemplate.stopIds, ...(Array.isArray(body.stop_token_ids) ? body.stop_token_ids : [])]);
  const sampling: SamplingParams = {
    maxTokens: Math.max(1, num(body.max_tokens, 16)), temperature: num(body.temperature, 1), topP: num(body.top_p, 1),
    stopIds: [...stops], ...(Number.isInteger(body.seed) ? { seed: body.seed } : {}),
  };
  const withLogprobs = body.logprobs !== undefined && body.logprobs !== null;
  const withIds = body.return_token_ids === true;
  const id = `cmpl-${++state.requests}`;
  const created = Math.floor(Date.now() / 1000);
  const out: number[] = [];
  const lps: number[] = [];
  const text = (tid: number) => engine.tokenizer.decode([tid]);
  if (body.stream === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    for await (const t of state.tokens(ids, sampling, signal)) {
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
  for await (const t of state.tokens(ids, sampling, signal)) {
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

/** vLLM's weight-transfer routes with the `disk` backend (vllm/distributed/weight_transfer/disk_engine.py @ 3b98defb, draft PR #52152). */
export class DiskTransfer {
  private updating = false;
  private pendingPath: string | undefined;

  constructor(private readonly state: ServingState) {}

  async route(route: string, body: Json): Promise<[number, unknown]> {
    switch (route) {
      case 'POST /init_weight_transfer_engine':
        if (body.init_info === undefined || body.init_info === null) return [400, { detail: "Missing 'init_info' in request body" }];
        return [200, { message: 'Weight transfer initialized' }];
      case 'POST /start_weight_update':
        if (this.updating) return [500, { error: 'A shared-disk weight update is already active' }];
        this.updating = true;
        this.pendingPath = undefined;
        return [200, { message: 'Weight update started' }];
      case 'POST /update_weights': {
        const path = body.update_info?.path;
        if (body.update_info === undefined) return [400, { detail: "Missing 'update_info' in request body" }];
        if (!this.updating) return [500, { error: 'start_weight_update must be called before loading a checkpoint' }];
        if (typeof path !== 'string' || !path.startsWith('/')) { this.updating = false; return [500, { error: '`path` must be a non-empty absolute local directory' }]; }
        this.pendingPath = path;
        return [200, { message: 'Weights updated' }];
      }
      case 'POST /finish_weight_update': {
        if (!this.updating) return [500, { error: 'No shared-disk weight update is active' }];
        this.updating = false;
        if (!this.pendingPath) return [500, { error: 'No checkpoint was loaded during the shared-disk update session' }];
        try { await this.state.load(this.pendingPath, body.weight_version); } catch (err) { return [500, { error: messageOf(err) }]; }
        return [200, { message: 'Weight update finished' }];
      }
      default: return [404, { detail: 'Not Found' }];
    }
  }
}

/** vLLM's control routes: weight info, the weight-transfer routes (only with the disk backend), pause and resume, LoRA refused. */
export async function vllmControl(state: ServingState, disk: DiskTransfer | undefined, o: { weightInfo: boolean; validates?: boolean }, route: string, query: URLSearchParams, body: Json): Promise<[number, unknown] | undefined> {
  switch (route) {
    case 'GET /weight_info': return o.weightInfo ? [200, { weight_version: state.version() }] : [404, { detail: 'Not Found' }];
    case 'POST /init_weight_transfer_engine':
    case 'POST /start_weight_update':
    case 'POST /update_weights':
    case 'POST /finish_weight_update':
      // Released vLLM has no disk backend: a folder of full weights has no route to arrive by.
      return disk ? disk.route(route, body) : [404, { detail: 'Not Found' }];
    case 'POST /pause': {
      const mode = query.get('mode') ?? 'abort';
      // `mode: Annotated[PauseMode, Query()]`: FastAPI refuses another value with 422 (releases.ts).
      if (!PAUSE_MODES.includes(mode as never)) return o.validates ? unprocessable(['query', 'mode'], 'literal_error', mode, PAUSE_MODES) : [400, { error: `invalid pause mode ${mode}` }];
      state.pause();
      return [200, { status: 'paused' }];
    }
    case 'POST /resume': state.resume(); return [200, { status: 'resumed' }];
    case 'GET /is_paused': return [200, { is_paused: state.paused }];
    case 'POST /v1/load_lora_adapter':
      return [400, { error: { message: 'the embedded engine serves whole weights: LoRA adapters are not supported (sync with the full-weight routes)', type: 'BadRequestError', code: 400 } }];
    default: return undefined;
  }
}
