import { cliCheck, cliVersion, definePlugin, harnessResult, installRootOf, ORACLE_CALL_PURPOSE, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { defaultCacheDir, warmCache } from './cache';
import { classifyCopilotCall } from './classify';

/** Per-rollout options of the GitHub Copilot CLI harness. */
export const CopilotOptions = z.strictObject({
  /** The `copilot` executable as seen inside the sandbox (the native binary, `@github/copilot-linux-x64/copilot`). */
  bin: z.string().default('copilot'),
  /**
   * Host folder of the unpacked CLI shared by every rollout (`COPILOT_CACHE_HOME`), unpacked once
   * and bound read-only into the sandboxes. Default: `node_modules/.cache/copilot` beside `bin`'s
   * install; with a bare `bin` none, and each rollout unpacks ~235 MB into its own HOME.
   */
  cacheDir: z.string().optional(),
  /** The prompt size Copilot is told the model takes (`COPILOT_PROVIDER_MAX_PROMPT_TOKENS`); it compacts near it. Default: its own. */
  maxPromptTokens: z.number().int().positive().optional(),
  /** Largest reply it asks for (`COPILOT_PROVIDER_MAX_OUTPUT_TOKENS`). Default: its own. */
  maxOutputTokens: z.number().int().positive().optional(),
});
type Options = z.output<typeof CopilotOptions>;

const cacheOf = (o: Options) => o.cacheDir ?? defaultCacheDir(o.bin);

/**
 * Environment of one rollout: the BYOK provider at the session (Chat Completions), offline mode
 * (no GitHub login, telemetry, web tools, GitHub MCP server or update), the shared cache when
 * there is one. The key is only here, never on the command line or in a file.
 */
export function copilotEnv(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint'>, o: Options, cacheDir: string | undefined): Record<string, string> {
  const home = ctx.sandbox.homePath;
  return {
    HOME: home, TMPDIR: `${home}/tmp`,
    COPILOT_PROVIDER_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, COPILOT_PROVIDER_API_KEY: ctx.endpoint.apiKey,
    COPILOT_PROVIDER_TYPE: 'openai', COPILOT_PROVIDER_WIRE_API: 'completions', COPILOT_MODEL: ctx.endpoint.model,
    COPILOT_OFFLINE: 'true', COPILOT_AUTO_UPDATE: 'false',
    ...(cacheDir ? { COPILOT_CACHE_HOME: cacheDir } : {}),
    ...(o.maxPromptTokens ? { COPILOT_PROVIDER_MAX_PROMPT_TOKENS: String(o.maxPromptTokens) } : {}),
    ...(o.maxOutputTokens ? { COPILOT_PROVIDER_MAX_OUTPUT_TOKENS: String(o.maxOutputTokens) } : {}),
  };
}

/**
 * Command line of one headless rollout: `-p` runs the prompt and exits; `--allow-all` approves
 * every tool, path and URL (the sandbox is the boundary); `--no-ask-user` leaves no question to
 * wait on; `-C` makes the workspace its directory.
 */
export function copilotArgv(ctx: Pick<HarnessRunContext, 'sandbox' | 'instruction'>, o: Options): string[] {
  return [o.bin, '-p', ctx.instruction, '--allow-all', '--no-ask-user', '--no-auto-update', '--no-color', '--output-format', 'json', '-C', ctx.sandbox.workspacePath];
}

/** The real GitHub Copilot CLI (OpenAI Chat Completions through its bring-your-own-key provider), headless. */
export const copilotHarness: Harness = {
  name: 'copilot',
  /** Main agent or side call, from recorded requests: see {@link classifyCopilotCall}. */
  classifyCall: classifyCopilotCall,
  wireFormat: 'openai-chat',
  cliPackage: '@github/copilot',
  async check(options) {
    return cliCheck(options, { name: 'GitHub Copilot CLI', packageName: '@github/copilot', missing: { reason: 'GitHub Copilot CLI is not installed: scripts/install-harnesses.sh copilot', install: 'bash scripts/install-harnesses.sh copilot' } });
  },
  hostPaths(options) {
    const o = parseWithSchema(CopilotOptions, options, 'options of harness');
    return [...installRootOf(o.bin), ...(o.cacheDir ? [o.cacheDir] : [])];
  },
  version(options, run) {
    const o = parseWithSchema(CopilotOptions, options, 'options of harness');
    const cache = cacheOf(o);
    // With the shared cache, its --version does not unpack the package again.
    return cliVersion(cache && !run ? ['env', `COPILOT_CACHE_HOME=${cache}`, o.bin, '--version'] : [o.bin, '--version'], run);
  },
  /**
   * The oracle's calls as Copilot's `bash` in the workspace (its `-C`): its `view` and `create`
   * take only absolute paths, and `create` refuses a file that exists.
   */
  oracleCall(call) {
    const command = oracleShellCommand(call);
    return command === undefined ? call : { name: 'bash', arguments: { command, description: ORACLE_CALL_PURPOSE[call.name] } };
  },
  async run(ctx) {
    const o = parseWithSchema(CopilotOptions, ctx.options, 'options of harness "copilot"');
    const shared = cacheOf(o);
    // Unpacked once on the host; a cache that could not be warmed is not passed (read-only and
    // empty, the CLI would fail): then the rollout unpacks into its own HOME.
    const cacheDir = shared && (await warmCache(o.bin, shared)) ? shared : undefined;
    const env = copilotEnv(ctx, o, cacheDir);
    await ctx.sandbox.exec(['mkdir', '-p', env.TMPDIR!], { env });
    return harnessResult(await ctx.sandbox.exec(copilotArgv(ctx, o), { env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal }));
  },
};

/** `@clawgym/harness-copilot`: provides the `copilot` harness. */
export default definePlugin({
  name: 'clawgym:harness-copilot',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(copilotHarness);
  },
});

export { classifyCopilotCall } from './classify';
export { cacheIsWarm, defaultCacheDir, warmCache } from './cache';
