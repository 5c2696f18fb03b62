import { cliCheck, cliVersion, definePlugin, harnessResult, installRootOf, oracleShellCommand, parseWithSchema, shellQuote, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyClineCall } from './classify';

/** Per-rollout options of the Cline harness. */
export const ClineOptions = z.strictObject({
  /** The `cline` executable as seen inside the sandbox (the native binary, `cline/bin/.cline`). */
  bin: z.string().default('cline'),
  /**
   * The context window Cline is told the model has (tokens, its provider setting `contextWindow`).
   * It compacts the conversation when a request would come near it. Default: 128000.
   */
  contextLimit: z.number().int().positive().default(128_000),
  /** Largest reply Cline asks for (its provider setting `maxTokens`). Default: 8192. */
  outputLimit: z.number().int().positive().default(8192),
  /**
   * How Cline compacts a long conversation (`--compaction`): `agentic` (a summarising model call,
   * the CLI's default), `basic` (drops old turns, no model call) or `off`.
   */
  compaction: z.enum(['agentic', 'basic', 'off']).default('agentic'),
});

/** The provider Cline is configured with: its OpenAI-compatible one, which reads the key from `OPENAI_API_KEY`. */
const PROVIDER = 'openai-compatible';

/**
 * `providers.json` for one rollout (Cline's `~/.cline/data/settings/`): its OpenAI-compatible
 * provider at the session, the model's limits, no catalogue download, and no key: Cline reads it
 * from `OPENAI_API_KEY` (the provider's `apiKeyEnv`, 3.0.65).
 */
export function clineProviders(endpoint: HarnessRunContext['endpoint'], o: Pick<z.output<typeof ClineOptions>, 'contextLimit' | 'outputLimit'>): Record<string, unknown> {
  return {
    version: 1,
    lastUsedProvider: PROVIDER,
    modes: {},
    providers: {
      [PROVIDER]: {
        settings: {
          provider: PROVIDER, model: endpoint.model, baseUrl: `${endpoint.baseUrl}/v1`,
          contextWindow: o.contextLimit, maxTokens: o.outputLimit,
          modelCatalog: { loadLatestOnInit: false, includeClineCloudModels: false, loadPrivateOnAuth: false },
        },
        updatedAt: '2026-01-01T00:00:00.000Z',
        tokenSource: 'manual',
      },
    },
  };
}

/**
 * Environment switches (names read in its 3.0.65 binary): no update check, no telemetry, and the
 * session kept in the process (`CLINE_SESSION_BACKEND_MODE=local`): by default ("auto") a run starts
 * a hub daemon (`--cline-hub-daemon`) that detaches and outlives it.
 */
export const CLINE_OFFLINE_ENV = { CLINE_NO_AUTO_UPDATE: '1', DISABLE_TELEMETRY: '1', CLINE_SESSION_BACKEND_MODE: 'local' } as const;

/** Command line and environment of one headless Cline rollout. */
export function clineInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, o: z.output<typeof ClineOptions>) {
  const home = ctx.sandbox.homePath;
  const providersPath = `${home}/.cline/data/settings/providers.json`;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, OPENAI_API_KEY: ctx.endpoint.apiKey, ...CLINE_OFFLINE_ENV };
  // A prompt runs in act mode with every tool approved (`--auto-approve` defaults to true); `-c` is
  // its working directory. Cline takes an argument without whitespace for a command's name ("Unknown
  // command or unquoted prompt", or the command itself: `doctor`, `update`): a one-word instruction
  // gets a trailing newline, which makes it a prompt.
  const prompt = /\s/.test(ctx.instruction) ? ctx.instruction : `${ctx.instruction}\n`;
  const argv = [o.bin, '--json', '-c', ctx.sandbox.workspacePath, '-P', PROVIDER, '-m', ctx.endpoint.model, '--compaction', o.compaction, prompt];
  return { argv, env, providersPath, providers: JSON.stringify(clineProviders(ctx.endpoint, o), null, 2) };
}

/** The real Cline CLI (OpenAI Chat Completions through its OpenAI-compatible provider), headless. */
export const clineHarness: Harness = {
  name: 'cline',
  /** Main agent or side call, from recorded requests: see {@link classifyClineCall}. */
  classifyCall: classifyClineCall,
  wireFormat: 'openai-chat',
  cliPackage: 'cline',
  async check(options) {
    return cliCheck(options, { name: 'Cline', packageName: 'cline', missing: { reason: 'Cline is not installed: scripts/install-harnesses.sh cline', install: 'bash scripts/install-harnesses.sh cline' } });
  },
  hostPaths(options) {
    return installRootOf(parseWithSchema(ClineOptions, options, 'options of harness').bin);
  },
  version(options, run) {
    return cliVersion([parseWithSchema(ClineOptions, options, 'options of harness').bin, '--version'], run);
  },
  /**
   * The oracle's calls with Cline's `run_commands`, which runs in the workspace (`-c`), so relative
   * paths work (its `read_files` and `editor` ask for absolute paths).
   */
  oracleCall(call) {
    const command = oracleShellCommand(call);
    if (command === undefined) return call;
    // A file is written into its folder, made first.
    const mkdir = call.name === 'write_file' ? `mkdir -p -- "$(dirname -- ${shellQuote(call.arguments.path)})" && ` : '';
    return { name: 'run_commands', arguments: { commands: [mkdir + command] } };
  },
  async run(ctx) {
    const inv = clineInvocation(ctx, parseWithSchema(ClineOptions, ctx.options, 'options of harness "cline"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, `${ctx.sandbox.homePath}/.cline/data/settings`], { env: inv.env });
    await ctx.sandbox.writeFile(inv.providersPath, inv.providers);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-cline`: provides the `cline` harness. */
export default definePlugin({
  name: 'clawgym:harness-cline',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(clineHarness);
  },
});

export { classifyClineCall } from './classify';
