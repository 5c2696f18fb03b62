import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PublishedWeights } from '@clawgym/core';

/**
 * The HTTP control plane that loads published weights into a running vLLM or SGLang server.
 * Each function is one replica's sequence, exactly as the server's own routes take it; the
 * conformance tests replay transcripts derived from those sources (named there).
 */

/** One control-plane call: the transport the engine client gives (base URL, auth, timeout applied). */
export type ControlCall = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<{ status: number; text: string }>;

/** Thrown when a step of a sequence is refused; the caller retries or names the replica. */
export class SyncStepError extends Error {
  constructor(readonly step: string, readonly status: number, readonly reply: string) {
    super(`${step} answered HTTP ${status}${reply ? `: ${reply.slice(0, 300)}` : ''}`);
  }
}

const json = (text: string): Record<string, unknown> => {
  try { const v = JSON.parse(text); return v && typeof v === 'object' ? v : {}; } catch { return {}; }
};

async function ok(call: ControlCall, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await call(method, path, body);
  if (r.status < 200 || r.status >= 300) throw new SyncStepError(`${method} ${path}`, r.status, r.text);
  return json(r.text);
}

/** A served `weight_version` label back to a policy version (we send the version's decimal string). */
export function versionOf(label: unknown): number | undefined {
  const n = typeof label === 'number' ? label : typeof label === 'string' && /^\d+$/.test(label) ? Number(label) : NaN;
  return Number.isInteger(n) ? n : undefined;
}

/**
 * What an SGLang server takes, learnt once per server from its OpenAPI document (FastAPI's
 * `/openapi.json`, no side effects): whether `/model_info` exists (older servers, 0025436e:
 * `/get_model_info`, `/get_weight_version`).
 */
export interface SglangCapabilities { modelInfo: boolean }

export async function sglangCapabilities(call: ControlCall): Promise<SglangCapabilities> {
  const r = await call('GET', '/openapi.json');
  if (r.status !== 200) return { modelInfo: (await call('GET', '/model_info')).status === 200 };
  const paths = (json(r.text).paths ?? {}) as Record<string, unknown>;
  return { modelInfo: '/model_info' in paths };
}

/**
 * SGLang full weights from a Hugging Face folder: `POST /update_weights_from_disk {model_path,
 * weight_version}` alone, on every version, then the served version read back. Not paused, the
 * server takes its model-update writer lock, which waits for every request in flight to end and
 * holds new ones (tokenizer_manager.update_weights_from_disk), so its scheduler holds no request
 * when it flushes the cache after the load. Paused (`/pause_generation`, any mode) the update
 * skips that lock: at 0025436e the pause aborts every rollout in flight; with the newer modes
 * `retract` puts running requests back in the waiting queue and `in_place` keeps them, so the
 * flush fails and `assert flush_cache_success, "Cache flush failed after updating weights"` kills
 * the scheduler (sgl-project/sglang #32153 and #33784, both open, would allow it for `retract`).
 * The price: a sync waits for the longest call in flight (new calls wait meanwhile anyway).
 * `{success: false}` / HTTP 400 is a failed load.
 */
export async function sglangSync(call: ControlCall, w: PublishedWeights, caps: SglangCapabilities): Promise<number | undefined> {
  const r = await ok(call, 'POST', '/update_weights_from_disk', { model_path: w.path, weight_version: String(w.version) });
  if (r.success === false) throw new SyncStepError('POST /update_weights_from_disk', 200, String(r.message ?? ''));
  return sglangServedVersion(call, caps);
}

/** The weight version an SGLang server reports: `/model_info` where it has it, else `/get_weight_version`. */
export async function sglangServedVersion(call: ControlCall, caps: SglangCapabilities = { modelInfo: true }): Promise<number | undefined> {
  if (caps.modelInfo) {
    const info = await call('GET', '/model_info');
    if (info.status === 200) {
      const v = versionOf(json(info.text).weight_version);
      if (v !== undefined) return v;
    }
  }
  const old = await call('GET', '/get_weight_version');
  return old.status === 200 ? versionOf(json(old.text).weight_version) : undefined;
}

/**
 * SGLang LoRA (`--enable-lora`; http_server.py @ 0025436e `/load_lora_adapter`,
 * `LoadLoRAAdapterReqInput {lora_name, lora_path}`, answers 200 or 400 with `{success, error_message}`):
 * the adapter named per version, which `/generate` then asks for by `lora_path: <name>`; the one
 * two versions back is unloaded (`/unload_lora_adapter {lora_name}`). No pause: the base weights
 * do not change.
 */
export async function sglangLoraSync(call: ControlCall, w: PublishedWeights, prefix: string): Promise<number> {
  await sglangLoraReady(call, w.path);
  const r = await ok(call, 'POST', '/load_lora_adapter', { lora_name: adapterName(prefix, w.version), lora_path: w.path });
  if (r.success === false) throw new SyncStepError('POST /load_lora_adapter', 200, String(r.error_message ?? r.message ?? ''));
  if (w.version >= 2) await call('POST', '/unload_lora_adapter', { lora_name: adapterName(prefix, w.version - 2) });
  return w.version;
}

/**
 * Whether an SGLang server can take the adapter at `folder`, from what it was launched with
 * (`GET /get_server_info`: every ServerArgs field) and the adapter's `adapter_config.json` (its
 * rank `r`): `--enable-lora`, and a `--max-lora-rank` of at least `r` (SGLang sizes its LoRA
 * memory pool at launch; without `--lora-paths` it needs `--max-lora-rank` and
 * `--lora-target-modules`, server_args.py). Throws what to relaunch with; a server or a folder
 * that does not say is left to the load itself.
 */
async function sglangLoraReady(call: ControlCall, folder: string): Promise<void> {
  const info = await call('GET', '/get_server_info');
  if (info.status !== 200) return;
  const args = json(info.text);
  let rank: number | undefined;
  try { rank = Number(JSON.parse(readFileSync(join(folder, 'adapter_config.json'), 'utf8')).r) || undefined; } catch { rank = undefined; }
  const flags = `--enable-lora --max-lora-rank ${rank ?? 'R'} --lora-target-modules all`;
  if (args.enable_lora !== true) {
    throw new SyncStepError('GET /get_server_info', 200, `the server was launched without --enable-lora (enable_lora: ${JSON.stringify(args.enable_lora ?? null)}) and cannot load the LoRA adapter ${folder}; relaunch it with ${flags}`);
  }
  if (rank !== undefined && typeof args.max_lora_rank === 'number' && args.max_lora_rank < rank) {
    throw new SyncStepError('GET /get_server_info', 200, `the server's --max-lora-rank is ${args.max_lora_rank}, below the adapter's rank ${rank} (${folder}/adapter_config.json); relaunch it with ${flags}`);
  }
}

/** The adapter name a policy version is served under (vLLM LoRA): a record's `model` names its version. */
export const adapterName = (prefix: string, version: number) => `${prefix}-v${version}`;

/**
 * vLLM with LoRA (`--enable-lora`, `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`):
 * `POST /v1/load_lora_adapter {lora_name, lora_path}` (200 with a plain-text "Success: …";
 * 400/404 with an error object), each policy version under a name of its own, so the `model` of
 * each completion says which version served it. Never `load_inplace: true`: vLLM keeps the
 * request it loaded with (OpenAIServingModels.lora_requests) and hands it to every completion
 * that names the adapter, and its worker reloads an adapter from disk whenever that request says
 * `load_inplace` (LRUCacheWorkerLoRAManager.add_adapter) — every step, while the fix (vLLM #36373,
 * #41482 for issue #33791) is open. A retried load of a version whose first answer was lost meets
 * "has already been loaded" (400): that name is unloaded and loaded again, as SkyRL does. The
 * adapter two versions back is then unloaded (`POST /v1/unload_lora_adapter {lora_name}`); calls
 * still in flight on the previous one finish on it.
 */
export async function vllmLoraSync(call: ControlCall, w: PublishedWeights, prefix: string): Promise<number> {
  const name = adapterName(prefix, w.version);
  const body = { lora_name: name, lora_path: w.path };
  const first = await call('POST', '/v1/load_lora_adapter', body);
  if (first.status === 400 && /has already been loaded/.test(first.text)) {
    await ok(call, 'POST', '/v1/unload_lora_adapter', { lora_name: name });
    await ok(call, 'POST', '/v1/load_lora_adapter', body);
  } else if (first.status < 200 || first.status >= 300) {
    throw new SyncStepError('POST /v1/load_lora_adapter', first.status, first.text);
  }
  if (w.version >= 2) await call('POST', '/v1/unload_lora_adapter', { lora_name: adapterName(prefix, w.version - 2) });
  return w.version;
}

/**
 * vLLM full weights from a folder through its weight-transfer routes (`VLLM_SERVER_DEV_MODE=1`,
 * `--weight-transfer-config '{"backend":"disk"}'`; vllm/entrypoints/serve/dev/rlhf/api_router.py).
 * Released vLLM registers no `disk` backend (vllm/distributed/weight_transfer/factory.py @ 047c993c:
 * nccl, ipc, sparse_nccl; `disk` is the open draft PR #52152), so the engine uses this only where
 * its `vllmFullWeights: 'disk'` option says the server was built with it:
 * once per server `POST /init_weight_transfer_engine {init_info: {}}` (the disk backend needs no
 * rendezvous), then `POST /pause?mode=keep` (requests in flight are frozen and resume on the new
 * weights), `POST /start_weight_update`, `POST /update_weights {update_info: {path}}` (the disk
 * backend's one field: an absolute folder of safetensors), `POST /finish_weight_update
 * {weight_version}`, `POST /resume` — sent even when a step failed — and `GET /weight_info`.
 */
export async function vllmFullSync(call: ControlCall, w: PublishedWeights, o: { initialized: boolean }): Promise<number | undefined> {
  if (!o.initialized) {
    await ok(call, 'POST', '/init_weight_transfer_engine', { init_info: {} });
    o.initialized = true;
  }
  await ok(call, 'POST', '/pause?mode=keep');
  try {
    await ok(call, 'POST', '/start_weight_update');
    await ok(call, 'POST', '/update_weights', { update_info: { path: w.path } });
    await ok(call, 'POST', '/finish_weight_update', { weight_version: String(w.version) });
  } finally {
    await ok(call, 'POST', '/resume');
  }
  // `/weight_info` arrived with vLLM PR #49040 (2026-07-18); an older server answers 404, which
  // says nothing about the load that just succeeded.
  const info = await call('GET', '/weight_info');
  return info.status === 200 ? versionOf(json(info.text).weight_version) : undefined;
}
