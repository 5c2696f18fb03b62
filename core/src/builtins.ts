import { z } from 'zod';
import type { EngineProvider } from './contracts/engine';
import type { TrainerProvider } from './contracts/trainer';
import { AdamOptions } from './train/adam-options';
import { UnigramTrainer } from './train/unigram-trainer';
import type { SandboxProvider } from './contracts/sandbox';
import { onPath } from './util/which';
import { parseWithSchema } from './config/validate';
import { definePlugin } from './kernel/plugin';
import { ScriptedEngine, type ScriptedTurn } from './engine/scripted';
import { createTokenIdEngine } from './engine/token-id-client';
import { tinkerEngineProvider } from './tinker/engine';
import { tinkerTrainerProvider } from './tinker/trainer';
import { localSandboxProvider, type LocalSandboxOptions } from './sandbox/local';
import { detectMachine } from './sandbox/machine';
import { htmlReporter } from './report/reporters';
import { tensorboardReporter } from './report/tensorboard/reporter';
import { clippedTisLoss } from './train/policy-loss';
import type { Kernel } from './kernel/kernel';
import { CORE_VERSION } from './version';
import { ClawGymError, ErrorCodes, messageOf } from './errors';
import { resolve } from 'node:path';
import { loadChatModel } from './model/load';

const Turn = z.strictObject({
  text: z.string().optional(),
  thinking: z.string().optional(),
  toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })).optional(),
});

/**
 * `engine: { use: 'scripted', options: { replies: [...] } }`: call N of every session gets reply N
 * (the last repeats); a call without a session (one served over HTTP: `clawgym engine serve`)
 * gets the reply of its conversation's turn, counted by the assistant turns in its prompt.
 */
const ScriptedOptions = z.strictObject({
  replies: z.array(Turn).min(1).default([{ text: 'Hello from the ClawGym scripted engine.' }]),
  /**
   * A Hugging Face model folder: prompts and replies in that model's tokens and chat template
   * (default: byte-level ChatML), reply logprobs under the unigram policy `trainer: 'unigram'`
   * trains over that vocabulary (uniform until its weights load).
   */
  tokenizer: z.string().min(1).optional(),
  /** The context it stands for (default: the folder's config.json, else none): the proxy refuses longer prompts. */
  contextLength: z.number().int().positive().optional(),
  /** Chat-template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  templateKwargs: z.record(z.string(), z.unknown()).optional(),
});

/** The assistant turns before the one a ChatML prompt asks for (its last `<|im_start|>assistant` opens the reply). */
const chatMlTurn = (prompt: string) => Math.max(0, prompt.split('<|im_start|>assistant').length - 2);

const scripted: EngineProvider = {
  name: 'scripted',
  async create(options, ctx) {
    const { replies, tokenizer: folder, contextLength, templateKwargs } = parseWithSchema(ScriptedOptions, options, 'options of engine "scripted"');
    const model = folder === undefined ? undefined : loadChatModel(folder, { rootDir: ctx.rootDir, templateKwargs });
    const engine = new ScriptedEngine(({ sessionId, callIndex, prompt }) => {
      const turn = sessionId === 'default' ? chatMlTurn(prompt) : callIndex;
      return replies[Math.min(turn, replies.length - 1)] as ScriptedTurn;
    }, model);
    engine.contextLength = contextLength ?? model?.contextLength;
    return model ? engine.scoreWithUnigram() : engine;
  },
};

/** `trainer: { use: 'unigram', options: { tokenizer } }`: see {@link UnigramTrainer}. */
const UnigramOptions = z.strictObject({
  /** The Hugging Face model folder whose vocabulary the policy spans (the engine's tokenizer). */
  tokenizer: z.string().min(1),
  optimizer: AdamOptions.prefault({}),
});

const unigram: TrainerProvider = {
  name: 'unigram',
  async create(options, ctx) {
    const { tokenizer, optimizer } = parseWithSchema(UnigramOptions, options, 'options of trainer "unigram"');
    return new UnigramTrainer(loadChatModel(tokenizer, { rootDir: ctx.rootDir }).tokenizer.vocabSize, optimizer);
  },
};

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
 * The local sandbox with its self-check: it isolates with bubblewrap and, without it, refuses
 * to run unless allowUnisolated says so. The check starts a real bubblewrap sandbox (as the
 * provider does), so a `bwrap` that is installed but cannot work here (no user namespaces in
 * a container) is named as well as a missing one.
 */
function checkedLocalSandbox(options: LocalSandboxOptions): SandboxProvider {
  const local = localSandboxProvider(options);
  return Object.assign(local, {
    async check() {
      let machine;
      try { machine = await detectMachine(options); } catch (e) {
        return { ok: false, reason: messageOf(e), install: 'bash scripts/openclaw-image.sh' };
      }
      if (machine.mode === 'bubblewrap') return { ok: true, reason: `${machine.bwrapVersion} at ${machine.bwrap}` };
      if (options.allowUnisolated) return { ok: true, reason: `plain processes WITHOUT filesystem isolation (${machine.whyFallback}; allowUnisolated is set)` };
      return {
        ok: false,
        reason: `${machine.whyFallback}: the local sandbox refuses to run rollouts unisolated (sandbox options allowUnisolated: true would run plain processes without file isolation)${onPath('bwrap') ? '; let bubblewrap create user namespaces here, or use the docker sandbox' : ''}`,
        ...(onPath('bwrap') ? {} : { install: 'apt-get install -y bubblewrap' }),
      };
    },
  });
}

/** `sandbox: { use: 'local', options: {...} }`. */
const LocalSandboxOptionsSchema = z.strictObject({
  /** Run plain processes where bubblewrap is missing (refused otherwise: no filesystem isolation). */
  allowUnisolated: z.boolean().optional(),
  /** Folder the sandboxes live in. */
  root: z.string().optional(),
  /** Plain processes even where bubblewrap works (needs allowUnisolated). */
  forceFallback: z.boolean().optional(),
  /** Limits by cgroups where possible (default true). */
  cgroups: z.boolean().optional(),
  /** One holder process per bubblewrap sandbox that runs its commands (default true, as root; docs/sandboxes.md). */
  holder: z.boolean().optional(),
  /** Holders started ahead per sandbox shape (default 2; 0: none). */
  warmPool: z.number().int().min(0).max(64).optional(),
  /** A root filesystem (the OpenClaw image's) whose system sandboxes see instead of the host's (relative to the config's folder). */
  rootfs: z.string().min(1).optional(),
});

/**
 * What ships with core, loaded into every kernel like any plugin: the scripted, vLLM and SGLang
 * engines, the Tinker client and the unigram stand-in trainer, the local sandbox (bubblewrap; plain processes only with allowUnisolated), the
 * `tensorboard` and `html` reporters and the `clipped-tis` policy loss. The composition root
 * (`run/create-kernel.ts`) applies them; the kernel itself knows no provider.
 */
export const builtins = definePlugin({
  name: 'clawgym:core',
  options: z.strictObject({ localSandbox: LocalSandboxOptionsSchema.optional() }),
  apply(api, options) {
    api.provide.engine(scripted);
    api.provide.engine(tokenIdProvider('vllm'));
    api.provide.engine(tokenIdProvider('sglang'));
    api.provide.engine(tinkerEngineProvider);
    api.provide.trainer(tinkerTrainerProvider);
    api.provide.trainer(unigram);
    api.provide.sandbox(checkedLocalSandbox({ ...options.localSandbox, log: (m) => api.log.warn(m) }));
    api.provide.reporter(tensorboardReporter());
    api.provide.reporter(htmlReporter);
    api.provide.policyLoss(clippedTisLoss);
  },
});

/** Apply core's built-ins to a kernel, as the `@clawgym/core` package. */
export function useBuiltins(kernel: Kernel): Promise<void> {
  // The local sandbox is core's: its slot's options (e.g. allowUnisolated) configure it here.
  const slot = kernel.config.sandbox;
  const parsed = typeof slot !== 'string' && slot.use === 'local' ? parseWithSchema(LocalSandboxOptionsSchema, slot.options, 'sandbox.options') : undefined;
  const local = parsed?.rootfs === undefined ? parsed : { ...parsed, rootfs: resolve(kernel.config.rootDir, parsed.rootfs) };
  return kernel.use(builtins(local ? { localSandbox: local } : {}), { packageName: '@clawgym/core', version: CORE_VERSION });
}
