import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyKiloCall } from './classify';

/** Per-rollout options of the Kilo Code harness. */
export const KiloOptions = z.strictObject({
  /** The `kilo` executable as seen inside the sandbox (the native binary, `@kilocode/cli/bin/.kilo`). */
  bin: z.string().default('kilo'),
  /**
   * The context window Kilo is told the model has (tokens). It compacts the session (a
   * summarising side call, classified compaction) when a call's usage comes near it. Default: 128000.
   */
  contextLimit: z.number().int().positive().default(128_000),
  /** Largest reply Kilo asks for (`max_tokens`). Default: 8192. */
  outputLimit: z.number().int().positive().default(8192),
});

/**
 * The Kilo Code release a project installs (`npm i -D @kilocode/cli@7.7.7`, doctor's hint), as
 * scripts/install-harnesses.sh pins it: 7.8.1's postinstall asks for `@kilocode/cli-linux-x64@7.8.1`,
 * which the registry does not hold, and the install fails.
 */
export const KILO_CLI_VERSION = '7.7.7';

/** The provider id Kilo is configured with (`clawgym/<model>`). */
const PROVIDER = 'clawgym';

/**
 * `kilo.json` for one rollout: one OpenAI-compatible provider at the session and nothing else
 * (Kilo's own gateway is neither chosen nor enabled; sharing and updates off).
 */
export function kiloConfig(endpoint: HarnessRunContext['endpoint'], options: Pick<z.output<typeof KiloOptions>, 'contextLimit' | 'outputLimit'>): Record<string, unknown> {
  return {
    $schema: 'https://app.kilo.ai/config.json',
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible', name: PROVIDER,
        options: { baseURL: `${endpoint.baseUrl}/v1`, apiKey: '{env:CLAWGYM_API_KEY}' },
        models: { [endpoint.model]: { name: endpoint.model, limit: { context: options.contextLimit, output: options.outputLimit } } },
      },
    },
    // Only this provider: otherwise Kilo fetches its gateway's model list (api.kilo.ai) at every start.
    enabled_providers: [PROVIDER],
    model: `${PROVIDER}/${endpoint.model}`,
    small_model: `${PROVIDER}/${endpoint.model}`,
    autoupdate: false,
    share: 'disabled',
  };
}

/**
 * Environment switches that keep Kilo from reaching outside hosts: the models catalogue, its
 * session ingest, language-server downloads, default plugins, update checks, telemetry
 * (the `KILO_*` names in its 7.7.7 binary; docs/harnesses.md).
 */
export const KILO_OFFLINE_ENV = {
  KILO_DISABLE_MODELS_FETCH: '1', KILO_DISABLE_AUTOUPDATE: '1', KILO_DISABLE_SHARE: '1', KILO_DISABLE_SESSION_INGEST: '1',
  KILO_DISABLE_LSP_DOWNLOAD: '1', KILO_DISABLE_DEFAULT_PLUGINS: '1', KILO_DISABLE_CLAUDE_CODE: '1', KILO_DISABLE_CODEBASE_INDEXING: '1',
  KILO_DISABLE_PRESENCE: '1', KILO_TELEMETRY_LEVEL: 'off',
} as const;

/** Command line and environment of one headless Kilo rollout. */
export function kiloInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: z.output<typeof KiloOptions>) {
  const home = ctx.sandbox.homePath;
  const configPath = `${home}/.config/kilo/kilo.json`;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, KILO_CONFIG: configPath, CLAWGYM_API_KEY: ctx.endpoint.apiKey, ...KILO_OFFLINE_ENV };
  // `--auto` approves every permission that is not denied (as OpenCode's, which Kilo forks).
  // `--dir`: Kilo 7.7.7 takes its directory from PWD when set (a stale one named the runner's folder to the model).
  const argv = [options.bin, 'run', '--format', 'json', '--auto', '--dir', ctx.sandbox.workspacePath, ctx.instruction];
  return { argv, env, configPath, config: JSON.stringify(kiloConfig(ctx.endpoint, options), null, 2) };
}

/** The real Kilo Code CLI (OpenAI Chat Completions through its openai-compatible provider), headless. */
export const kiloHarness: Harness = {
  name: 'kilo',
  /** Main agent or side call, from recorded requests: see {@link classifyKiloCall}. */
  classifyCall: classifyKiloCall,
  wireFormat: 'openai-chat',
  cliPackage: '@kilocode/cli',
  async check(options) {
    return cliCheck(options, { name: 'Kilo Code', packageName: '@kilocode/cli', packageVersion: KILO_CLI_VERSION, missing: { reason: 'Kilo Code is not installed: scripts/install-harnesses.sh kilo', install: 'bash scripts/install-harnesses.sh kilo' } });
  },
  hostPaths(options) {
    return installRootOf(parseWithSchema(KiloOptions, options, 'options of harness').bin);
  },
  version(options, run) {
    const { bin } = parseWithSchema(KiloOptions, options, 'options of harness');
    return installedCliVersion(bin, [bin, '--version'], run);
  },
  /**
   * The oracle's calls with Kilo's tools (OpenCode's). Relative paths work: Kilo resolves them
   * against the directory it runs in (`--dir`, the workspace).
   */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'read', arguments: { filePath: a.path } };
      case 'write_file': return { name: 'write', arguments: { filePath: a.path, content: a.content } };
      case 'list_files': return { name: 'bash', arguments: { command: oracleShellCommand(call), description: 'List files' } };
      case 'bash': return { name: 'bash', arguments: { command: a.command, description: 'Run a command' } };
      default: return call;
    }
  },
  async run(ctx) {
    const inv = kiloInvocation(ctx, parseWithSchema(KiloOptions, ctx.options, 'options of harness "kilo"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, `${ctx.sandbox.homePath}/.config/kilo`], { env: inv.env });
    await ctx.sandbox.writeFile(inv.configPath, inv.config);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-kilo`: provides the `kilo` harness. */
export default definePlugin({
  name: 'clawgym:harness-kilo',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(kiloHarness);
  },
});

export { classifyKiloCall } from './classify';
