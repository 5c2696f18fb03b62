import { ClawGymError, ErrorCodes, definePlugin, parseWithSchema, z, type EngineProvider } from '@clawgym/core';
import { loadChatModel } from '@clawgym/model-hf';
import { createTokenIdEngine } from './token-id-client';

const TokenIdOptions = z.strictObject({
  baseUrl: z.url().optional(),
  /** Several servers of the model: rollouts spread over them (each sticks to one); weights reach every one. */
  replicas: z.array(z.url()).min(1).optional(),
  /** vLLM LoRA adapters are served as `<loraPrefix>-v<version>`. */
  loraPrefix: z.string().regex(/^[\w.-]+$/).optional(),
  syncRetries: z.number().int().min(0).optional(),
  syncBackoffMs: z.number().int().positive().optional(),
  probeIntervalMs: z.number().int().positive().optional(),
  model: z.string(),
  apiKey: z.string().optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
  /** The server's context (vLLM's max_model_len): the proxy refuses longer prompts itself. Default: config.json's. */
  contextLength: z.number().int().positive().optional(),
  /** The served model's Hugging Face folder (tokenizer.json, tokenizer_config.json, chat template). */
  tokenizer: z.string().min(1),
  /** What the server's logprobs are (default: the server's own: vLLM `raw`, SGLang `processed`; see TokenIdEngineOptions.logprobs). */
  logprobs: z.enum(['processed', 'raw']).optional(),
  /** Chat-template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  templateKwargs: z.record(z.string(), z.unknown()).optional(),
  /** vLLM built with the disk weight-transfer backend (unreleased PR #52152): full weights load from the published folder. */
  vllmFullWeights: z.literal('disk').optional(),
});

/**
 * vLLM or SGLang over HTTP with token ids in and out, prompts rendered with the served model's
 * own tokenizer and chat template (`options.tokenizer`: its Hugging Face folder).
 */
const tokenIdProvider = (flavor: 'vllm' | 'sglang'): EngineProvider => ({
  name: flavor,
  async create(options, ctx) {
    if (typeof options.tokenizer !== 'string' || !options.tokenizer) {
      // Ids from any other tokenizer would mean nothing to the served model: refuse, and say what to pass.
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `engine "${flavor}" needs engine.options.tokenizer: the folder with the served model's tokenizer.json and chat template`, {
        hint: `e.g. engine: { use: '${flavor}', options: { baseUrl: 'http://127.0.0.1:8000', model: 'Qwen/Qwen3-8B', tokenizer: './models/qwen3-8b' } } — ` +
          'the folder `huggingface-cli download <model> --include "*.json" "*.jinja" --local-dir <folder>` writes',
      });
    }
    const { tokenizer: folder, templateKwargs, ...o } = parseWithSchema(TokenIdOptions, options, `options of engine "${flavor}"`);
    const model = loadChatModel(folder, { rootDir: ctx.rootDir, templateKwargs });
    return createTokenIdEngine({ flavor, ...o, contextLength: o.contextLength ?? model.contextLength, tokenizer: model.tokenizer, chatTemplate: model.chatTemplate });
  },
});

/**
 * `engine: 'vllm'` and `engine: 'sglang'`: a vLLM or SGLang server driven with token ids (see
 * docs/scale.md). Their stand-in, `clawgym engine serve`, ships in `@clawgym/standins`.
 */
export default definePlugin({
  name: 'clawgym:engine-vllm',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.engine(tokenIdProvider('vllm'));
    api.provide.engine(tokenIdProvider('sglang'));
  },
});

export { createTokenIdEngine, type TokenIdEngineOptions } from './token-id-client';
// The label a weight version travels under, shared with the engine stand-in (`@clawgym/standins`).
export { versionOf } from './weight-sync';
