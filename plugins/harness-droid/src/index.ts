import { cliCheck, cliVersion, definePlugin, harnessResult, installRootOf, ORACLE_CALL_PURPOSE, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyDroidCall } from './classify';

/** Per-rollout options of the Factory Droid harness. */
export const DroidOptions = z.strictObject({
  /** The `droid` executable as seen inside the sandbox (the native binary, `droid/bin/droid`). */
  bin: z.string().default('droid'),
  /** Largest reply Droid asks for (`maxOutputTokens` of the custom model). Default: 8192. */
  outputLimit: z.number().int().positive().default(8192),
  /** Context size (tokens) at which Droid compacts the session (`compactionTokenLimit`). Default: Droid's own (250000). */
  compactionTokenLimit: z.number().int().positive().optional(),
});

/** The variable `settings.json` names for the key (Droid expands `${VAR}` in a custom model's `apiKey`). */
const KEY_VARIABLE = 'CLAWGYM_API_KEY';

/**
 * The id Droid gives a custom model: `custom:<displayName, spaces as dashes>-<index>`
 * (0.215.0). The one model of a rollout's settings is index 0.
 */
export function droidModelId(model: string): string {
  return `custom:${model.trim().replace(/\s+/g, '-')}-0`;
}

/**
 * `~/.factory/settings.json` for one rollout: one custom model, an OpenAI-compatible endpoint at
 * the session (`generic-chat-completion-api`: Chat Completions), its key read from the
 * environment. No Factory account is used.
 */
export function droidSettings(endpoint: HarnessRunContext['endpoint'], options: Pick<z.output<typeof DroidOptions>, 'outputLimit' | 'compactionTokenLimit'>): Record<string, unknown> {
  return {
    ...(options.compactionTokenLimit ? { compactionTokenLimit: options.compactionTokenLimit } : {}),
    customModels: [{
      model: endpoint.model, displayName: endpoint.model, baseUrl: `${endpoint.baseUrl}/v1`,
      apiKey: `\${${KEY_VARIABLE}}`, provider: 'generic-chat-completion-api', maxOutputTokens: options.outputLimit,
    }],
  };
}

/**
 * Environment switches of its 0.215.0 binary: air-gapped mode (no Factory API, telemetry or
 * image generation; the `Task` subagents run in-process, where without it they need a Factory
 * login), no auto-update, no dynamic config, no OS keyring (none in a sandbox).
 */
export const DROID_OFFLINE_ENV = {
  FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false', FACTORY_DISABLE_DYNAMIC_CONFIG: 'true', FACTORY_DISABLE_KEYRING: 'true', FACTORY_AIRGAP_ENABLED: 'true',
} as const;

/** Command line and environment of one headless Droid rollout. */
export function droidInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: z.output<typeof DroidOptions>) {
  const home = ctx.sandbox.homePath;
  const settingsPath = `${home}/.factory/settings.json`;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, [KEY_VARIABLE]: ctx.endpoint.apiKey, ...DROID_OFFLINE_ENV };
  // `exec` is Droid's headless mode; `--skip-permissions-unsafe` approves every tool (the
  // sandbox is the boundary); `--cwd` makes the workspace its directory.
  const argv = [options.bin, 'exec', '--skip-permissions-unsafe', '-m', droidModelId(ctx.endpoint.model), '-o', 'json', '--cwd', ctx.sandbox.workspacePath, ctx.instruction];
  return { argv, env, settingsPath, settings: JSON.stringify(droidSettings(ctx.endpoint, options), null, 2) };
}

/** The real Factory Droid CLI (OpenAI Chat Completions through a BYOK custom model), headless. */
export const droidHarness: Harness = {
  name: 'droid',
  /** Main agent or side call, from recorded requests: see {@link classifyDroidCall}. */
  classifyCall: classifyDroidCall,
  wireFormat: 'openai-chat',
  cliPackage: 'droid',
  async check(options) {
    return cliCheck(options, { name: 'Factory Droid', packageName: 'droid', missing: { reason: 'Factory Droid is not installed: scripts/install-harnesses.sh droid', install: 'bash scripts/install-harnesses.sh droid' } });
  },
  hostPaths(options) {
    return installRootOf(parseWithSchema(DroidOptions, options, 'options of harness').bin);
  },
  version(options, run) {
    return cliVersion([parseWithSchema(DroidOptions, options, 'options of harness').bin, '--version'], run);
  },
  /**
   * The oracle's calls as Droid's `Execute` in the workspace (its `--cwd`): its Read and LS take
   * only absolute paths, and its Create ends a file with a newline the oracle did not write.
   */
  oracleCall(call) {
    const command = oracleShellCommand(call);
    return command === undefined ? call : { name: 'Execute', arguments: { summary: ORACLE_CALL_PURPOSE[call.name], command } };
  },
  async run(ctx) {
    const inv = droidInvocation(ctx, parseWithSchema(DroidOptions, ctx.options, 'options of harness "droid"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, `${ctx.sandbox.homePath}/.factory`], { env: inv.env });
    await ctx.sandbox.writeFile(inv.settingsPath, inv.settings);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-droid`: provides the `droid` harness. */
export default definePlugin({
  name: 'clawgym:harness-droid',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(droidHarness);
  },
});

export { classifyDroidCall } from './classify';
