import { z, type HarnessRunContext } from '@clawgym/core';

/** Per-rollout options of the Claude Code harness (`harnesses: [{ use: 'claude-code', options }]`). */
export const ClaudeCodeOptions = z.strictObject({
  /** The `claude` executable as seen inside the sandbox. */
  bin: z.string().default('claude'),
  /** Limit the tool list: 6 kB of schemas instead of 65–74 kB (docs/harnesses.md). */
  tools: z.array(z.string()).default(['Bash', 'Read', 'Write', 'Edit']),
  /** Fail fast on engine errors instead of 11 retries over ~3 minutes. */
  maxRetries: z.number().int().min(0).default(1),
  apiTimeoutMs: z.number().int().positive().default(120_000),
  /**
   * Run Claude Code as shipped: without `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` it also makes
   * its side calls (a conversation title with a JSON-schema `output_config.format`) and tries
   * outside hosts, which a sandbox without network refuses. Default: off (no side traffic).
   */
  nonessentialTraffic: z.boolean().default(false),
});
export type ClaudeCodeOptions = z.output<typeof ClaudeCodeOptions>;

/**
 * The command line and environment of one headless Claude Code rollout, as measured in
 * docs/harnesses.md: own HOME/TMPDIR, base URL and key of the rollout's proxy session, no
 * non-essential traffic, `IS_SANDBOX=1` so `--dangerously-skip-permissions` works as root.
 */
export function claudeCodeInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: ClaudeCodeOptions) {
  const home = ctx.sandbox.homePath;
  const env: Record<string, string> = {
    HOME: home,
    TMPDIR: `${home}/tmp`,
    IS_SANDBOX: '1',
    ANTHROPIC_BASE_URL: ctx.endpoint.baseUrl,
    ANTHROPIC_API_KEY: ctx.endpoint.apiKey,
    ANTHROPIC_MODEL: ctx.endpoint.model,
    ANTHROPIC_SMALL_FAST_MODEL: ctx.endpoint.model,
    ...(options.nonessentialTraffic ? {} : { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' }),
    CLAUDE_CODE_MAX_RETRIES: String(options.maxRetries),
    API_TIMEOUT_MS: String(options.apiTimeoutMs),
    DISABLE_AUTOUPDATER: '1',
  };
  const argv = [
    options.bin, '-p', ctx.instruction,
    '--output-format', 'json',
    '--dangerously-skip-permissions',
    ...(options.tools.length ? ['--tools', options.tools.join(',')] : []),
  ];
  return { argv, env, tmpDir: env.TMPDIR! };
}
