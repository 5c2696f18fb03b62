import type { BackendTraits } from '@clawgym/engine-tinker';

/**
 * The refusals of SkyRL's Tinker server that a client must cope with, worded as its source words
 * them (NovaSky-AI/SkyRL a9564572, skyrl/backends/skyrl_train_backend.py and
 * skyrl/backends/skyrl_train/workers/worker.py), so a client tested against the stand-in meets
 * the same text it will meet there.
 */
export const SKYRL_TEXT = {
  fullTenant: "SkyRLTrainBackend already has a 'policy' model; multi-tenant training is only supported for LoRA (rank > 0)",
  loraAfterFull: 'Cannot register an additional LoRA adapter: the first policy model was created without LoRA. Recreate the server with a LoRA-enabled first model.',
  fsdpAdapterStore: 'PolicyWorker.register_adapter is not implemented: multi-tenant LoRA adapter management (the adapter store) is currently only supported on the Megatron backend. The FSDP backend supports a single LoRA adapter (or full fine-tuning) per worker group.',
  unknownModel: (ids: string[]) => `Sampling requested for unknown model_id(s): [${ids.map((i) => `'${i}'`).join(', ')}]`,
} as const;

/** Why a second `create_model` fails while `loaded` is held (undefined: the backend takes it). */
export function secondModelRefusal(traits: BackendTraits, loaded: { rank: number }, rank: number): string | undefined {
  if (traits.tenancy === 'many') return undefined;
  if (rank <= 0) return SKYRL_TEXT.fullTenant;
  if (loaded.rank <= 0) return SKYRL_TEXT.loraAfterFull;
  if (traits.tenancy === 'one') return SKYRL_TEXT.fsdpAdapterStore;
  if (loaded.rank !== rank) return `LoRA signature mismatch: got (rank, alpha)=(${rank}, 32.0), first adapter registered with (${loaded.rank}, 32.0).`;
  return undefined;
}

/** A request the Tinker stand-in refuses: its HTTP status and FastAPI's `{detail}` body. */
export class TinkerRequestError extends Error {
  constructor(readonly status: number, detail: string) { super(detail); }
}
