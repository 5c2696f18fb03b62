import { dirname, join } from 'node:path';
import { definePlugin, harnessResult, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';

/** The agent loop's executable script (plain Node, no dependencies). */
export const AGENTLOOP_BIN = join(__dirname, '..', 'bin', 'agentloop.js');

/** Per-rollout options of the agentloop harness. */
export const AgentLoopOptions = z.strictObject({
  /** Turns (model calls) before the loop gives up. */
  maxTurns: z.number().int().positive().default(16),
  /** Node as seen inside the sandbox. */
  node: z.string().default('node'),
  /** The agentloop script as seen inside the sandbox (default: this package's, bound read-only). */
  bin: z.string().default(AGENTLOOP_BIN),
  /** Every tool call first waits a random [min, max] ms, as tools that wait on I/O do (bench:async). */
  toolLatencyMs: z.tuple([z.number().int().min(0), z.number().int().min(0)]).optional(),
});

/** Command line and environment of one agentloop rollout. */
export function agentLoopInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: z.output<typeof AgentLoopOptions>) {
  const env = {
    HOME: ctx.sandbox.homePath, TMPDIR: `${ctx.sandbox.homePath}/tmp`,
    OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey, OPENAI_MODEL: ctx.endpoint.model,
    // Straight to the proxy's socket where the sandbox has one: no forwarder process to start.
    ...(ctx.sandbox.modelSocketPath ? { CLAWGYM_MODEL_SOCKET: ctx.sandbox.modelSocketPath } : {}),
    ...(options.toolLatencyMs ? { CLAWGYM_TOOL_LATENCY_MS: `${options.toolLatencyMs[0]}-${options.toolLatencyMs[1]}` } : {}),
  };
  return { argv: [options.node, options.bin, '--max-turns', String(options.maxTurns), ctx.instruction], env };
}

/**
 * agentloop: a small white-box agent loop as its own process, speaking OpenAI Chat Completions
 * to the proxy, with read/write/list/bash tools confined to the workspace. The fast default
 * harness, and the white-box baseline against which black-box harnesses are compared.
 */
export const agentLoopHarness: Harness = {
  name: 'agentloop',
  wireFormat: 'openai-chat',
  async check() {
    return { ok: true };
  },
  hostPaths(options) {
    const bin = parseWithSchema(AgentLoopOptions, options, 'options of harness "agentloop"').bin;
    return bin.startsWith('/') ? [dirname(bin)] : [];
  },
  async run(ctx) {
    const inv = agentLoopInvocation(ctx, parseWithSchema(AgentLoopOptions, ctx.options, 'options of harness "agentloop"'));
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal, modelForwarder: !inv.env.CLAWGYM_MODEL_SOCKET });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-agentloop`: provides the `agentloop` harness. */
export default definePlugin({
  name: 'clawgym:harness-agentloop',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(agentLoopHarness);
  },
});
