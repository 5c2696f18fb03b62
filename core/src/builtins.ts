import { z } from 'zod';
import type { EngineProvider } from './contracts/engine';
import { parseWithSchema } from './config/validate';
import { definePlugin } from './kernel/plugin';
import { byteChatMl } from './engine/byte-chatml';
import { ScriptedEngine, type ScriptedTurn } from './engine/scripted';
import { createTokenIdEngine } from './engine/token-id-client';
import { localSandboxProvider } from './sandbox/local';
import { cpuKernels } from './kernels/cpu';
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
 * What ships with core, loaded into every kernel like any plugin: the scripted, vLLM and SGLang
 * engines, the local sandbox (bubblewrap, or a warned fallback) and the `cpu` compute kernels.
 */
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
});

export const builtins = definePlugin({
  name: 'clawgym:core',
  options: z.strictObject({ localSandbox: LocalSandboxOptionsSchema.optional() }),
  apply(api, options) {
    api.provide.engine(scripted);
    api.provide.engine(tokenIdProvider('vllm'));
    api.provide.engine(tokenIdProvider('sglang'));
    api.provide.sandbox(localSandboxProvider({ ...options.localSandbox, log: (m) => api.log.warn(m) }));
    api.provide.kernels(cpuKernels());
  },
});

/** Apply core's built-ins to a kernel, as the `@clawgym/core` package. */
export function useBuiltins(kernel: Kernel): Promise<void> {
  // The local sandbox is core's: its slot's options (e.g. allowUnisolated) configure it here.
  const slot = kernel.config.sandbox;
  const local = typeof slot !== 'string' && slot.use === 'local' ? parseWithSchema(LocalSandboxOptionsSchema, slot.options, 'sandbox.options') : undefined;
  return kernel.use(builtins(local ? { localSandbox: local } : {}), { packageName: '@clawgym/core', version: CORE_VERSION });
}
