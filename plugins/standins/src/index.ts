/**
 * `@clawgym/standins`: ClawGym's own servers in place of the ones a run trains against, for runs
 * and tests without GPUs. `clawgym trainer serve` serves a trainer over the Tinker API as SkyRL's
 * server does; `clawgym engine serve` serves an engine behind vLLM's and SGLang's routes. Each is
 * as strict as the release it names (`--as`), so a client that works against the stand-in works
 * against that release. Core's CLI reaches these commands through this package.
 */
export { TinkerServer, type TinkerServerOptions } from './trainer/server';
export { STAND_IN_RELEASES, type StandInRelease } from './trainer/server-release';
export { trainerServe } from './trainer/serve-command';
export { serveEngine, type EngineServer, type EngineServerOptions } from './engine/engine-server';
export { engineServe } from './engine/command';
export { UnigramDatumTrainer, UnigramTrainer } from './unigram/unigram-trainer';
export { loadUnigramWeights, saveUnigramWeights, UNIGRAM_MODEL_TYPE } from './unigram/unigram-weights';
export { UnigramScriptedEngine } from './unigram/unigram-engine';
