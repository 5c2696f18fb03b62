import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyOpenCodeCall } from './classify';

/** Per-rollout options of the OpenCode harness. */
export const OpenCodeOptions = z.strictObject({
  /** The `opencode` executable as seen inside the sandbox (a native binary). */
  bin: z.string().default('opencode'),
  /**
   * The context window OpenCode is told the model has (tokens). It compacts the session (a
   * summarising side call, classified compaction) when a call's usage comes near it. Default: 128000.
   */
  contextLimit: z.number().int().positive().default(128_000),
  /** Largest reply OpenCode asks for (`max_tokens`). Default: 8192. */
  outputLimit: z.number().int().positive().default(8192),
});

/** The provider id and model id OpenCode is configured with (`clawgym/<model>`). */
const PROVIDER = 'clawgym';

/**
 * `opencode.json` for one rollout: one OpenAI-compatible provider at the session, nothing else
 * contacted (sharing, auto-update off; docs/harnesses.md).
 */
export function openCodeConfig(endpoint: HarnessRunContext['endpoint'], options: Pick<z.output<typeof OpenCodeOptions>, 'contextLimit' | 'outputLimit'>): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible', name: PROVIDER,
        options: { baseURL: `${endpoint.baseUrl}/v1`, apiKey: '{env:CLAWGYM_API_KEY}' },
        models: { [endpoint.model]: { name: endpoint.model, limit: { context: options.contextLimit, output: options.outputLimit } } },
      },
    },
    model: `${PROVIDER}/${endpoint.model}`,
    small_model: `${PROVIDER}/${endpoint.model}`,
    autoupdate: false,
    share: 'disabled',
  };
}

/**
 * Environment switches that keep OpenCode from reaching outside hosts: the models.dev catalogue,
 * language-server downloads, its default npm plugins, update checks (measured: docs/harnesses.md).
 */
export const OPENCODE_OFFLINE_ENV = {
  OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_DEFAULT_PLUGINS: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1',
} as const;

/** Command line and environment of one headless OpenCode rollout. */
export function openCodeInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: z.output<typeof OpenCodeOptions>) {
  const home = ctx.sandbox.homePath;
  const configPath = `${home}/.config/opencode/opencode.json`;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, OPENCODE_CONFIG: configPath, CLAWGYM_API_KEY: ctx.endpoint.apiKey, ...OPENCODE_OFFLINE_ENV };
  // `--auto` approves every permission that is not denied (OpenCode's auto-approval flag).
  const argv = [options.bin, 'run', '--format', 'json', '--auto', ctx.instruction];
  return { argv, env, configPath, config: JSON.stringify(openCodeConfig(ctx.endpoint, options), null, 2) };
}

/** The real OpenCode CLI (OpenAI Chat Completions through its openai-compatible provider), headless. */
export const openCodeHarness: Harness = {
  name: 'opencode',
  /** Main agent or side call, from recorded requests: see {@link classifyOpenCodeCall}. */
  classifyCall: classifyOpenCodeCall,
  /** The oracle's calls with OpenCode's tools (relative paths resolve in the workspace, its cwd). */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'read', arguments: { filePath: a.path } };
      case 'write_file': return { name: 'write', arguments: { filePath: a.path, content: a.content } };
      case 'list_files': return { name: 'bash', arguments: { command: oracleShellCommand(call) } };
      case 'bash': return { name: 'bash', arguments: { command: a.command } };
      default: return call;
    }
  },
  wireFormat: 'openai-chat',
  cliPackage: 'opencode-ai',
  async check(options) {
    return cliCheck(options, { name: 'OpenCode', packageName: 'opencode-ai', missing: { reason: 'OpenCode is not installed: scripts/install-harnesses.sh opencode', install: 'bash scripts/install-harnesses.sh opencode' } });
  },
  hostPaths(options) {
    return installRootOf(parseWithSchema(OpenCodeOptions, options, 'options of harness').bin);
  },
  version(options, run) {
    const { bin } = parseWithSchema(OpenCodeOptions, options, 'options of harness');
    return installedCliVersion(bin, [bin, '--version'], run);
  },
  async run(ctx) {
    const inv = openCodeInvocation(ctx, parseWithSchema(OpenCodeOptions, ctx.options, 'options of harness "opencode"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, `${ctx.sandbox.homePath}/.config/opencode`], { env: inv.env });
    await ctx.sandbox.writeFile(inv.configPath, inv.config);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-opencode`: provides the `opencode` harness. */
export default definePlugin({
  name: 'clawgym:harness-opencode',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(openCodeHarness);
  },
});

export { classifyOpenCodeCall } from './classify';
