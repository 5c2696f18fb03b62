import { definePlugin, z } from '@clawgym/core';
import { tinkerEngineProvider } from './engine';
import { tinkerTrainerProvider } from './trainer';

/**
 * `trainer: 'tinker'` and `engine: 'tinker'`: a trainer (and its sampler) behind the Tinker API —
 * hosted Tinker or SkyRL's Tinker server (docs/scale.md). Its stand-in, `clawgym trainer serve`,
 * ships in `@clawgym/standins`.
 */
export default definePlugin({
  name: 'clawgym:engine-tinker',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.engine(tinkerEngineProvider);
    api.provide.trainer(tinkerTrainerProvider);
  },
});

export { TinkerTrainer, TinkerTrainerOptions, tinkerTrainerProvider } from './trainer';
export { TinkerEngine, TinkerEngineOptions, tinkerEngineProvider } from './engine';
export { TinkerHttp, defaultRetry, type RetryOptions } from './http';
export { TinkerModel } from './client';
export { BACKEND_TRAITS, TRAINER_BACKENDS, SKYRL_FIXED_OPTIMIZER, type BackendTraits, type TrainerBackend } from './backends';
export { packFolder, unpackArchive } from './archive';
// The wire format and the servers' contracts, shared with the Tinker stand-in (`@clawgym/standins`).
export { decodeAdam, decodeDatum, decodeLossConfig, inputTokens, parseTinkerPath, type WireDatum, type WireModelInput, type WirePassInput, type WirePassOutput, type WireSampleOutput } from './wire';
export { fieldsOf, loadContract, openapiOf, routeOf, type Contract, type ContractName } from './contracts';
