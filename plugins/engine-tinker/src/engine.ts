import { parseWithSchema, byteChatMl, ClawGymError, ErrorCodes, type ChatTemplate, type Engine, type EngineProvider, type GenerateRequest, type GeneratedToken, type Tokenizer, type PublishedWeights , z } from '@clawgym/core';
import { loadChatModel } from '@clawgym/model-hf';
import { TinkerHttp } from './http';
import { RetrySchema } from './trainer';
import { BACKEND_TRAITS, TRAINER_BACKENDS, type TrainerBackend } from './backends';
import { modelInput, parseTinkerPath, type WireFuture, type WireSampleOutput } from './wire';

/** `engine: { use: 'tinker', options }`. */
export const TinkerEngineOptions = z.strictObject({
  baseUrl: z.url(),
  apiKey: z.string().optional(),
  /** The model sampled until the trainer publishes weights. */
  baseModel: z.string().default('embedded'),
  contextLength: z.number().int().positive().optional(),
  /**
   * The base model's Hugging Face folder (tokenizer.json, tokenizer_config.json, chat template):
   * prompts are rendered and ids read with it. Needed for every model but `embedded` (the
   * byte-level model `clawgym trainer serve` serves).
   */
  tokenizer: z.string().min(1).optional(),
  /** Chat-template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  templateKwargs: z.record(z.string(), z.unknown()).optional(),
  /**
   * Sample these published weights (`tinker://<model_id>/<checkpoint>`) until the trainer
   * publishes newer ones (an evaluation of a checkpoint). Refused where the backend samples its
   * last synced weights whatever the path says (SkyRL FSDP/Megatron).
   */
  modelPath: z.string().regex(/^tinker:\/\//).optional(),
  /** The service's backend, as the trainer's `backend` (SkyRL `--backend fsdp` is `skyrl-fsdp`; hosted Tinker `tinker`). */
  backend: z.enum(TRAINER_BACKENDS as [string, ...string[]]).default('skyrl-fsdp'),
  retry: RetrySchema,
});

/**
 * Sampling through a Tinker service (`asample`, then its future): token ids in, tokens and their
 * logprobs out, from the weights the trainer last published with `save_weights_for_sampler`
 * (`syncWeights` takes their `tinker://` path), or the base model before the first. Tokens
 * arrive whole, when the sample is done; they are yielded one by one.
 */
export class TinkerEngine implements Engine {
  readonly name = 'tinker';
  private modelPath?: string;
  private version = 0;

  constructor(private readonly http: TinkerHttp, private readonly baseModel: string, readonly tokenizer: Tokenizer, readonly chatTemplate: ChatTemplate, readonly contextLength?: number) {}

  policyVersion(): number { return this.version; }

  async syncWeights(weights?: PublishedWeights): Promise<void> {
    if (!weights) return;
    if (!parseTinkerPath(weights.path)) {
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `engine "tinker" samples weights the service holds (a tinker:// path), but the trainer published ${weights.path}`, { hint: 'Leave out the tinker trainer\'s checkpointsDir when the engine is "tinker" too: it makes published weights local folders.' });
    }
    this.modelPath = weights.path;
    this.version = weights.version;
  }

  async *generate(request: GenerateRequest): AsyncIterable<readonly GeneratedToken[]> {
    const s = request.sampling;
    const body = {
      num_samples: 1,
      prompt: modelInput(request.promptIds),
      sampling_params: { max_tokens: s.maxTokens, seed: s.seed ?? null, stop: [...this.chatTemplate.stopIds, ...(s.stopIds ?? [])], temperature: s.temperature, top_k: -1, top_p: s.topP },
      ...(this.modelPath ? { model_path: this.modelPath } : { base_model: this.baseModel }),
      type: 'sample',
    };
    const future = await this.http.post<WireFuture>('/api/v1/asample', body);
    const out = await this.http.result<WireSampleOutput>(future, 'asample').catch((e: unknown) => {
      if (!this.modelPath && e instanceof ClawGymError && /unknown model_id\(s\): \[''\]/.test(e.message)) {
        throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `Tinker service at ${this.http.baseUrl} does not sample the base model (SkyRL's FSDP and Megatron backends sample only weights published with save_weights_for_sampler)`, {
          cause: e, hint: '`clawgym run` publishes the initial weights before its first rollout; an evaluation outside a run needs a backend that samples a named checkpoint (engine.options.modelPath with backend \'skyrl-jax\' or \'tinker\').',
        });
      }
      throw e;
    });
    const seq = out.sequences[0];
    if (!seq || seq.tokens.length !== seq.logprobs.length) {
      throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `Tinker service at ${this.http.baseUrl}: asample answered ${seq ? `${seq.tokens.length} tokens with ${seq.logprobs.length} logprobs` : 'no sequence'}`, { hint: 'The service must return one logprob per sampled token.' });
    }
    if (request.signal?.aborted) return;
    // The sample arrives whole: its tokens are one step.
    yield seq.tokens.map((tokenId, i) => ({ tokenId, logprob: seq.logprobs[i]! }));
  }
}

export const tinkerEngineProvider: EngineProvider = {
  name: 'tinker',
  async create(options, ctx) {
    const o = parseWithSchema(TinkerEngineOptions, options, 'options of engine "tinker"');
    if (!o.tokenizer && o.baseModel !== 'embedded') {
      // Byte-level ids would mean nothing to a real model: refuse, and say what to pass.
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `engine "tinker" samples ${o.baseModel}, so it needs engine.options.tokenizer: the folder with that model's tokenizer.json and chat template`, {
        hint: `e.g. engine: { use: 'tinker', options: { baseUrl, baseModel: '${o.baseModel}', tokenizer: './models/qwen3-8b' } } — ` +
          'the folder `huggingface-cli download <model> --include "*.json" "*.jinja" --local-dir <folder>` writes. Only baseModel "embedded" (clawgym trainer serve) is byte-level.',
      });
    }
    if (o.modelPath && !BACKEND_TRAITS[o.backend as TrainerBackend].samplesNamedCheckpoint) {
      // SkyRL FSDP/Megatron would answer, with whatever weights they synced last: an evaluation
      // of an older checkpoint would silently evaluate the current weights.
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `engine "tinker" (backend ${o.backend}) cannot sample ${o.modelPath}: that backend's asample samples the weights its inference engines were last synced with (the last save_weights_for_sampler), whichever checkpoint model_path names`, {
        hint: 'Evaluate during the run that trains it (run.evalEvery samples each published step), or put the checkpoint on the service first: a run resumed from it (`clawgym run --resume`) loads it and publishes it before its first rollout. With a backend that loads the named checkpoint (SkyRL JAX, hosted Tinker), set engine.options.backend to \'skyrl-jax\' or \'tinker\'.',
      });
    }
    const model = o.tokenizer ? loadChatModel(o.tokenizer, { rootDir: ctx.rootDir, templateKwargs: o.templateKwargs }) : { ...byteChatMl(), contextLength: undefined };
    const engine = new TinkerEngine(new TinkerHttp(o.baseUrl, o.apiKey, o.retry), o.baseModel, model.tokenizer, model.chatTemplate, o.contextLength ?? model.contextLength);
    if (o.modelPath) await engine.syncWeights({ path: o.modelPath, version: 0, kind: 'full' });
    return engine;
  },
};
