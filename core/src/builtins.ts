import { z } from 'zod';
import type { EngineProvider } from './contracts/engine';
import type { SandboxProvider } from './contracts/sandbox';
import { onPath } from './util/which';
import { parseWithSchema } from './config/validate';
import { definePlugin } from './kernel/plugin';
import { byteChatMl } from './engine/byte-chatml';
import { ScriptedEngine, type ScriptedTurn } from './engine/scripted';
import { createTokenIdEngine } from './engine/token-id-client';
import { tinkerEngineProvider } from './tinker/engine';
import { tinkerTrainerProvider } from './tinker/trainer';
import { localSandboxProvider } from './sandbox/local';
import { cpuKernels } from './kernels/cpu';
import { htmlReporter } from './report/reporters';
import { tensorboardReporter } from './report/tensorboard/reporter';
import { clippedTisLoss } from './train/policy-loss';
import type { Kernel } from './kernel/kernel';
import { CORE_VERSION } from './version';

const Turn = z.strictObject({
  text: z.string().optional(),
  thinking: z.string().optional(),
  toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })).optional(),
});

/** `engine: { use: 'scripted', options: { replies: [...] } }`: call N of every session gets reply N (the last repeats). */
const ScriptedOptions = z.strictObject({
  replies: z.array(Turn).min(1).default([{ text: 'Hello from the ClawGym scripted engine.' }]),
});

const scripted: EngineProvider = {
  name: 'scripted',
  async create(options) {
    const { replies } = parseWithSchema(ScriptedOptions, options, 'options of engine "scripted"');
    return new ScriptedEngine(({ callIndex }) => replies[Math.min(callIndex, replies.length - 1)] as ScriptedTurn);
  },
};

const TokenIdOptions = z.strictObject({
  baseUrl: z.url(),
  model: z.string(),
  apiKey: z.string().optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
  /** The server's context (vLLM's max_model_len): the proxy refuses longer prompts itself. */
  contextLength: z.number().int().positive().optional(),
});

/** vLLM or SGLang over HTTP with token ids in and out (byte-level template until model tokenizers land). */
const tokenIdProvider = (flavor: 'vllm' | 'sglang'): EngineProvider => ({
  name: flavor,
  async create(options) {
    const o = parseWithSchema(TokenIdOptions, options, `options of engine "${flavor}"`);
    return createTokenIdEngine({ flavor, ...o, ...byteChatMl() });
  },
});

/**
 * The local sandbox with its self-check: it isolates with bubblewrap and, without it, falls
 * back to running unisolated with a warning, so a missing `bwrap` is what doctor names.
 */
function checkedLocalSandbox(log: (m: string) => void): SandboxProvider {
  const local = localSandboxProvider({ log });
  return Object.assign(local, {
    async check() {
      const bwrap = onPath('bwrap');
      return bwrap
        ? { ok: true, reason: `bubblewrap at ${bwrap}` }
        : { ok: false, reason: 'bubblewrap (bwrap) is not on PATH: sandboxes would run without isolation (the warned fallback)', install: 'apt-get install -y bubblewrap' };
    },
  });
}

/**
 * What ships with core, loaded into every kernel like any plugin: the scripted, vLLM and SGLang
 * engines, the local sandbox (bubblewrap, or a warned fallback), the `cpu` compute kernels, the
 * `tensorboard` and `html` reporters and the `clipped-tis` policy loss. The composition root
 * (`run/create-kernel.ts`) applies them; the kernel itself knows no provider.
 */
export const builtins = definePlugin({
  name: 'clawgym:core',
  options: z.strictObject({}),
  apply(api) {
    api.provide.engine(scripted);
    api.provide.engine(tokenIdProvider('vllm'));
    api.provide.engine(tokenIdProvider('sglang'));
    api.provide.engine(tinkerEngineProvider);
    api.provide.trainer(tinkerTrainerProvider);
    api.provide.sandbox(checkedLocalSandbox((m) => api.log.warn(m)));
    api.provide.kernels(cpuKernels());
    api.provide.reporter(tensorboardReporter());
    api.provide.reporter(htmlReporter);
    api.provide.policyLoss(clippedTisLoss);
  },
});

/** Apply core's built-ins to a kernel, as the `@clawgym/core` package. */
export function useBuiltins(kernel: Kernel): Promise<void> {
  return kernel.use(builtins(), { packageName: '@clawgym/core', version: CORE_VERSION });
}
