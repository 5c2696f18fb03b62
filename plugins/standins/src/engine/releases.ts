/**
 * The server releases `clawgym engine serve --as <server>@<commit>` reproduces: which protocol
 * it serves (the other's routes answer 404, as that server has none of them) and how the routes
 * ClawGym's clients use answer there. Each field says where in the server's source it was read
 * (the mirrors `scripts/server-contracts/` reads; docs/scale.md "The stand-ins").
 */
export interface EngineRelease {
  /** Which server's routes it serves; `both` only without `--as` (the stand-in's own default). */
  server: 'sglang' | 'vllm' | 'both';
  /** What the banner and `/openapi.json` say it is. */
  label: string;
  /**
   * SGLang's pause: `0025436e` reads no body and aborts every request in flight, no `/model_info`;
   * `modes` takes `{mode: abort | retract | in_place}` and serves `/model_info`.
   */
  sglang: '0025436e' | 'modes';
  /**
   * Bodies and queries are validated as FastAPI does: a missing required field or a value outside
   * a Literal is 422 with `{detail: [{type, loc, msg, input}]}`, before the handler runs.
   */
  validates: boolean;
  /** `/pause_generation` and `/continue_generation` take a required JSON body (`Annotated[…, Body()]`). */
  pauseBody: boolean;
  /** `GET /get_weight_version` answers 404 ("deprecated … use /model_info"). */
  weightVersionGone: boolean;
  /** vLLM's `GET /weight_info`. */
  vllmWeightInfo: boolean;
}

/** The stand-in as it was before `--as`: both protocols on one port, SGLang as at 0025436e, lenient bodies. */
export const DEFAULT_RELEASE: EngineRelease = {
  server: 'both', label: 'vLLM and SGLang', sglang: '0025436e', validates: false, pauseBody: false, weightVersionGone: false, vllmWeightInfo: true,
};

/**
 * The releases `--as` knows, each a commit whose source was read:
 *
 * - `sglang@0025436e`: the commit the SGLang client was first written against (transcripts in
 *   plugins/engine-vllm/src/weight-sync.test.ts). Its route shapes are those of sgl-project/sglang
 *   main before 2025-11-17, read at a8fcbf6f: `pause_generation(request: Request)` and
 *   `continue_generation(request: Request)` read no body (http_server.py:1057-1074), only
 *   `/get_model_info` and `/get_weight_version` (:484, :499), `update_weights_from_disk(obj:
 *   UpdateWeightFromDiskReqInput)` with `model_path: str` required (:720; io_struct.py:1068-1070).
 * - `sglang@8905cbd4`: main of 2026-07-20. `/model_info` (http_server.py:693, since 25acbbc6),
 *   `/get_weight_version` answers 404 (:713-719), `pause_generation` and `continue_generation` take
 *   a required body (:1612-1634; `PauseGenerationReqInput.mode: Literal["abort", "retract",
 *   "in_place"]`, io_struct.py:1490-1509, since 007c3e23), `update_weights_from_disk` with
 *   `model_path: str` required (:1161-1165; io_struct.py:1533-1535). A retracted request at an
 *   update kills the scheduler (sglang-update.test.ts).
 * - `vllm@c8109375`: vllm-project/vllm main of 2026-08-03. `POST /pause` with `mode: Annotated[
 *   PauseMode, Query()]` ("abort" | "wait" | "keep"; vllm/entrypoints/serve/dev/rlhf/api_router.py:
 *   29-35), `/resume`, `/is_paused`, `GET /weight_info` (:223-226).
 * - `vllm@90245f41`: the commit before `/weight_info` arrived (9069a571, PR #49040): the same
 *   routes, `/weight_info` answers 404.
 *
 * SGLang 00c17caf and vLLM 047c993c are in no snapshot that could be read here: `--as` refuses
 * them rather than guess (name the nearest release above).
 */
export const ENGINE_RELEASES = {
  'sglang@0025436e': { server: 'sglang', label: 'SGLang 0025436e', sglang: '0025436e', validates: true, pauseBody: false, weightVersionGone: false, vllmWeightInfo: false },
  'sglang@8905cbd4': { server: 'sglang', label: 'SGLang 8905cbd4', sglang: 'modes', validates: true, pauseBody: true, weightVersionGone: true, vllmWeightInfo: false },
  'vllm@c8109375': { server: 'vllm', label: 'vLLM c8109375', sglang: '0025436e', validates: true, pauseBody: false, weightVersionGone: false, vllmWeightInfo: true },
  'vllm@90245f41': { server: 'vllm', label: 'vLLM 90245f41', sglang: '0025436e', validates: true, pauseBody: false, weightVersionGone: false, vllmWeightInfo: false },
} as const satisfies Record<string, EngineRelease>;

export type EngineReleaseName = keyof typeof ENGINE_RELEASES;

/** Routes only SGLang serves, and only vLLM (both serve /health, /v1/models, /v1/completions, /metrics, /openapi.json). */
const SGLANG_ONLY = new Set(['POST /generate', 'POST /pause_generation', 'POST /continue_generation', 'POST /update_weights_from_disk', 'GET /get_server_info', 'GET /get_model_info', 'GET /model_info', 'GET /get_weight_version', 'POST /flush_cache', 'POST /load_lora_adapter', 'POST /unload_lora_adapter']);
const VLLM_ONLY = new Set(['POST /pause', 'POST /resume', 'GET /is_paused', 'GET /weight_info', 'POST /init_weight_transfer_engine', 'POST /start_weight_update', 'POST /update_weights', 'POST /finish_weight_update', 'POST /v1/load_lora_adapter', 'POST /v1/unload_lora_adapter']);

/** Whether the release has the route at all (one it lacks answers 404, FastAPI's `{detail: "Not Found"}`). */
export function servesRoute(r: EngineRelease, route: string): boolean {
  if (r.server === 'sglang') return !VLLM_ONLY.has(route);
  if (r.server === 'vllm') return !SGLANG_ONLY.has(route);
  return true;
}

/** FastAPI's answer to a request its parameters do not validate: 422, one entry per problem. */
export function unprocessable(loc: (string | number)[], type: 'missing' | 'literal_error', input: unknown, expected?: readonly string[]): [number, unknown] {
  const msg = type === 'missing' ? 'Field required' : `Input should be ${expected!.map((e) => `'${e}'`).join(', ').replace(/, ([^,]*)$/, ' or $1')}`;
  return [422, { detail: [{ type, loc, msg, input: input ?? null, ...(expected ? { ctx: { expected: expected.map((e) => `'${e}'`).join(', ').replace(/, ([^,]*)$/, ' or $1') } } : {}) }] }];
}
