/**
 * Weights a trainer published for engines to load after an optimiser step (the Tinker API's
 * `save_weights_for_sampler`). An engine that shares weights in process ignores it; vLLM and
 * SGLang engines load `path` (`docs/scale.md`).
 */
export interface PublishedWeights {
  /** Where the weights are: a folder (safetensors, or a LoRA adapter folder) or a URI (`tinker://…`). */
  path: string;
  /** The policy version they are: the trainer's optimiser steps so far. */
  version: number;
  /** Whole weights, or a LoRA adapter over the engine's base model. */
  kind: 'full' | 'lora';
}
