import type { PublishedWeights } from '../contracts/weights';

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
 * SGLang (`docs/advanced_features/sglang_for_rl.md`: pause → update → continue is "the correct
 * execution flow"): `POST /pause_generation {mode: "retract"}` (running requests go back to the
 * queue, so the cache can be flushed and they are recomputed with the new weights; `abort` would
 * fail the rollouts in flight, `in_place` makes the flush fail), `POST /update_weights_from_disk
 * {model_path, weight_version, flush_cache: true}` (`{success: false}` with HTTP 400 when it could
 * not load), `POST /continue_generation` — sent even when the update failed, so a replica is never
 * left paused — then the version the server reports (`GET /model_info`, older servers
 * `GET /get_weight_version`).
 */
export async function sglangSync(call: ControlCall, w: PublishedWeights): Promise<number | undefined> {
  await ok(call, 'POST', '/pause_generation', { mode: 'retract' });
  try {
    const r = await ok(call, 'POST', '/update_weights_from_disk', { model_path: w.path, weight_version: String(w.version), flush_cache: true });
    if (r.success === false) throw new SyncStepError('POST /update_weights_from_disk', 200, String(r.message ?? ''));
  } finally {
    await ok(call, 'POST', '/continue_generation', {});
  }
  return sglangServedVersion(call);
}

/** The weight version an SGLang server reports: `/model_info` (newer), else `/get_weight_version`. */
export async function sglangServedVersion(call: ControlCall): Promise<number | undefined> {
  const info = await call('GET', '/model_info');
  if (info.status === 200) {
    const v = versionOf(json(info.text).weight_version);
    if (v !== undefined) return v;
  }
  const old = await call('GET', '/get_weight_version');
  return old.status === 200 ? versionOf(json(old.text).weight_version) : undefined;
}

/** The adapter name a policy version is served under (vLLM LoRA): a record's `model` names its version. */
export const adapterName = (prefix: string, version: number) => `${prefix}-v${version}`;

/**
 * vLLM with LoRA (`--enable-lora`, `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`):
 * `POST /v1/load_lora_adapter {lora_name, lora_path, load_inplace: true}` (200 with a plain-text
 * "Success: …"; 400/404 with an error object), the adapter named per policy version, so the
 * `model` of each completion says which version served it; `load_inplace` makes a retried load of
 * the same version replace it instead of failing as "already loaded". The adapter two versions
 * back is then unloaded (`POST /v1/unload_lora_adapter {lora_name}`); calls still in flight on
 * the previous one finish on it.
 */
export async function vllmLoraSync(call: ControlCall, w: PublishedWeights, prefix: string): Promise<number> {
  await ok(call, 'POST', '/v1/load_lora_adapter', { lora_name: adapterName(prefix, w.version), lora_path: w.path, load_inplace: true });
  if (w.version >= 2) await call('POST', '/v1/unload_lora_adapter', { lora_name: adapterName(prefix, w.version - 2) });
  return w.version;
}

/**
 * vLLM full weights through its weight-transfer routes (`VLLM_SERVER_DEV_MODE=1`,
 * `--weight-transfer-config '{"backend":"disk"}'`; vllm/entrypoints/serve/dev/rlhf/api_router.py):
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
  return versionOf((await ok(call, 'GET', '/weight_info')).weight_version);
}
