import { ClawGymError } from '@clawgym/core';
import type { TinkerHttp } from './http';

/**
 * What a Tinker service takes beyond the oldest servers, learnt once from the server itself.
 *
 * `seqId`: whether a training request's `seq_id` makes a retry safe. SkyRL main reads it
 * (`OptimStepRequest.seq_id`, `create_future` answering a repeated one from the first future:
 * NovaSky-AI/SkyRL@a9564572 skyrl/tinker/api.py:681-684 and 362-409); its release `skyrl-v0.3.0`
 * has no such field on `ForwardBackwardRequest`/`ForwardRequest`/`OptimStepRequest`
 * (NovaSky-AI/SkyRL@f5bc3b78d skyrl/tinker/api.py:489-518), and pydantic drops unknown fields, so a
 * retried step runs twice. SkyRL is a FastAPI app, whose `/openapi.json` lists the body models of
 * its routes: `OptimStepRequest` with or without `seq_id` says which. Hosted Tinker takes it (the
 * SDK sends it: thinking-machines-lab/tinker@d595dc2 src/tinker/types/optim_step_request.py).
 * A service without the document is taken not to, so its training calls are never retried.
 */
export interface ServerFeatures {
  seqId: boolean;
  why: string;
  /**
   * Whether `load_weights` can leave the optimizer state out (`optimizer: false`). skyrl-v0.3.0's
   * LoadWeightsRequest has no such field (api.py:612-615 @ f5bc3b78d) and its handler loads
   * "weights and training state" always (:972-999); main has `optimizer: bool = True`
   * (api.py:778-783 @ a9564572).
   */
  loadWithoutOptimizer: boolean;
}

export async function serverFeatures(http: TinkerHttp, backend: string): Promise<ServerFeatures> {
  if (backend === 'tinker') return { seqId: true, why: 'hosted Tinker (the SDK sends seq_id)', loadWithoutOptimizer: true };
  let doc: { components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> } };
  try {
    doc = await http.get('/openapi.json');
  } catch (e) {
    if (e instanceof ClawGymError && /HTTP 40[34]/.test(e.message)) return { seqId: false, why: `${http.baseUrl}/openapi.json is not served, so whether it deduplicates by seq_id is unknown`, loadWithoutOptimizer: false };
    throw e;
  }
  const has = (model: string, field: string) => field in (doc.components?.schemas?.[model]?.properties ?? {});
  const loadWithoutOptimizer = has('LoadWeightsRequest', 'optimizer');
  if (has('OptimStepRequest', 'seq_id')) return { seqId: true, why: 'its OptimStepRequest has seq_id', loadWithoutOptimizer };
  return { seqId: false, why: `its /openapi.json shows no seq_id on OptimStepRequest (as SkyRL skyrl-v0.3.0)`, loadWithoutOptimizer };
}
