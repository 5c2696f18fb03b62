import { z, type HarnessRunContext } from '@clawgym/core';

/** Per-rollout options of the OpenClaw harness. */
export const OpenClawOptions = z.strictObject({
  /** Node ≥ 24.16 as seen inside the sandbox (from the npm `node@24` package). */
  node: z.string().default('node'),
  /** OpenClaw's entry script (or executable) as seen inside the sandbox. */
  entry: z.string().default('openclaw'),
  /** OpenClaw's own request timeout. */
  requestTimeoutSeconds: z.number().int().positive().default(120),
  /** The context window OpenClaw is told the model has (tokens); it compacts and caps replies by it. */
  contextWindow: z.number().int().positive().default(128_000),
  maxTokens: z.number().int().positive().default(8192),
  /**
   * OpenClaw's own `agents.defaults.compaction` settings, passed as they are (OpenClaw validates
   * them), e.g. `{ midTurnPrecheck: { enabled: true } }` to compact between tool calls of one
   * headless turn when the context nears `contextWindow`. Default: OpenClaw's own.
   */
  compaction: z.record(z.string(), z.unknown()).optional(),
});
export type OpenClawOptions = z.output<typeof OpenClawOptions>;

/** OpenClaw's per-rollout config: one provider (`p`), one model (`m`), at the proxy session. */
export function openClawConfig(endpoint: HarnessRunContext['endpoint'], options: OpenClawOptions) {
  return {
    agents: { defaults: { model: { primary: 'p/m' }, ...(options.compaction ? { compaction: options.compaction } : {}) } },
    models: {
      mode: 'replace',
      providers: {
        p: {
          baseUrl: `${endpoint.baseUrl}/v1`,
          apiKey: endpoint.apiKey,
          api: 'openai-completions',
          timeoutSeconds: options.requestTimeoutSeconds,
          models: [{
            id: 'm', name: endpoint.model, reasoning: false, input: ['text'],
            contextWindow: options.contextWindow, maxTokens: options.maxTokens,
          }],
        },
      },
    },
  };
}

/** Command line and environment of one headless OpenClaw rollout (docs/harnesses.md). */
export function openClawInvocation(
  ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction' | 'timeoutMs'>,
  options: OpenClawOptions,
) {
  const home = ctx.sandbox.homePath;
  const configPath = `${home}/openclaw.json`;
  const isScript = /\.(c|m)?js$/.test(options.entry);
  const argv = [
    ...(isScript ? [options.node, options.entry] : [options.entry]),
    'agent', 'exec', ctx.instruction,
    '--config', configPath,
    '--cwd', ctx.sandbox.workspacePath,
    '--json',
    '--timeout', String(Math.max(1, Math.floor(ctx.timeoutMs / 1000))),
  ];
  // Processes OpenClaw starts (its exec tool) should find the same Node 24 first.
  const nodeDir = options.node.includes('/') ? options.node.slice(0, options.node.lastIndexOf('/')) : undefined;
  const env: Record<string, string> = { HOME: home, TMPDIR: `${home}/tmp`, ...(nodeDir ? { PATH: `${nodeDir}:/usr/local/bin:/usr/bin:/bin` } : {}) };
  return { argv, env, configPath, config: openClawConfig(ctx.endpoint, options) };
}
