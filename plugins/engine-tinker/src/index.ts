import { definePlugin, z } from '@clawgym/core';
import { tinkerEngineProvider } from './engine';
import { tinkerTrainerProvider } from './trainer';

/**
 * `trainer: 'tinker'` and `engine: 'tinker'`: a trainer (and its sampler) behind the Tinker API —
 * hosted Tinker or SkyRL's Tinker server (docs/scale.md) — and `clawgym trainer serve`, a
 * stand-in that serves the embedded trainer over that API as strictly as SkyRL's backends behave.
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

export { TinkerServer, type TinkerServerOptions } from './server';
export { TinkerTrainer, TinkerTrainerOptions, tinkerTrainerProvider } from './trainer';
export { TinkerEngine, TinkerEngineOptions, tinkerEngineProvider } from './engine';
export { TinkerHttp, defaultRetry, type RetryOptions } from './http';
export { TinkerModel } from './client';
export { BACKEND_TRAITS, TRAINER_BACKENDS, SKYRL_FIXED_OPTIMIZER, type BackendTraits, type TrainerBackend } from './backends';
export { packFolder, unpackArchive } from './archive';
export { trainerServe } from './serve-command';
