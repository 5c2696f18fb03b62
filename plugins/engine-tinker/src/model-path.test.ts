import { ClawGymError, ErrorCodes } from '@clawgym/core';
import { tinkerEngineProvider } from './engine';

/*
 * `asample` with a `model_path` on SkyRL's FSDP/Megatron backends samples the weights last synced
 * into SkyRL's own vLLM engines, whichever checkpoint the path names (NovaSky-AI/SkyRL@a9564572):
 * - skyrl/tinker/api.py:1327-1341 checks that the checkpoint exists, then queues the request;
 * - skyrl/backends/skyrl_train_backend.py:1079-1093 (_sample_with_remote_client) sends each
 *   request to vLLM as `model: <model_id>` (LoRA) or the policy's served name (full weights):
 *   the checkpoint id and path it was handed are never read; only save_sampler_checkpoint
 *   (:1299-1317) changes what the engines hold;
 * - skyrl/tinker/extra/skyrl_train_inference_forwarding.py:76,117 (the non-colocated route)
 *   forwards with `model_name = base_model if base_model else model_id`: the same.
 * So an evaluation of an older checkpoint there would evaluate the current weights: refused.
 * SkyRL JAX loads the named checkpoint's adapter (`all_checkpoint_paths` in
 * skyrl/tinker/engine.py:75-79 feed its sampler), and hosted Tinker samples the path it is given.
 */
const ctx = { runDir: '', seed: 1 };

describe('engine "tinker" with modelPath', () => {
  it('is refused for SkyRL FSDP (the default) and Megatron, saying why and what works', async () => {
    for (const backend of [undefined, 'skyrl-megatron']) {
      const err = await tinkerEngineProvider.create({ baseUrl: 'http://127.0.0.1:9', modelPath: 'tinker://model_1/step-3', ...(backend ? { backend } : {}) }, ctx).then(() => undefined, (e: unknown) => e) as ClawGymError;
      expect(err).toBeInstanceOf(ClawGymError);
      expect(err.code).toBe(ErrorCodes.CONFIG_INVALID);
      expect(err.message).toMatch(/cannot sample tinker:\/\/model_1\/step-3: that backend's asample samples the weights its inference engines were last synced with/);
      expect(err.hint).toMatch(/run\.evalEvery/);
      expect(err.hint).toMatch(/'skyrl-jax' or 'tinker'/);
    }
  });

  it('is taken where the backend samples the checkpoint it is named (SkyRL JAX, hosted Tinker)', async () => {
    for (const backend of ['skyrl-jax', 'tinker']) {
      const engine = await tinkerEngineProvider.create({ baseUrl: 'http://127.0.0.1:9', modelPath: 'tinker://model_1/step-3', backend }, ctx);
      expect(engine.name).toBe('tinker');
    }
  });
});
