import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyCodexCall } from './classify';

/** Per-rollout options of the Codex harness. */
export const CodexOptions = z.strictObject({
  /** The `codex` executable as seen inside the sandbox. */
  bin: z.string().default('codex'),
  /**
   * `model_auto_compact_token_limit`: past this many tokens Codex compacts the conversation with
   * a summarising call (a side call, classified as compaction). Default: Codex's own.
   */
  autoCompactTokenLimit: z.number().int().positive().optional(),
});

/** `$CODEX_HOME/config.toml` for one rollout: one provider at the session, nothing else contacted (docs/harnesses.md). */
export function codexConfig(endpoint: HarnessRunContext['endpoint'], options: { autoCompactTokenLimit?: number } = {}): string {
  return [
    `model = ${JSON.stringify(endpoint.model)}`,
    ...(options.autoCompactTokenLimit ? [`model_auto_compact_token_limit = ${options.autoCompactTokenLimit}`] : []),
    'model_provider = "clawgym"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.clawgym]',
    'name = "clawgym"',
    `base_url = ${JSON.stringify(`${endpoint.baseUrl}/v1`)}`,
    'env_key = "CLAWGYM_API_KEY"',
    'wire_api = "responses"',
    '',
    '[analytics]', 'enabled = false', '',
    '[feedback]', 'enabled = false', '',
    '[features]', 'plugins = false', '',
  ].join('\n');
}

/** Command line and environment of one headless Codex rollout. */
export function codexInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: z.output<typeof CodexOptions>) {
  const home = ctx.sandbox.homePath;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, CODEX_HOME: `${home}/.codex`, CLAWGYM_API_KEY: ctx.endpoint.apiKey };
  const argv = [options.bin, 'exec', '--skip-git-repo-check', '--json', '--dangerously-bypass-approvals-and-sandbox', ctx.instruction];
  return { argv, env, configPath: `${env.CODEX_HOME}/config.toml`, config: codexConfig(ctx.endpoint, options) };
}

/** The real Codex CLI (OpenAI Responses only), headless, pointed at the rollout's session. */
export const codexHarness: Harness = {
  name: 'codex',
  /** Main agent or side call, from recorded requests: see {@link classifyCodexCall}. */
  classifyCall: classifyCodexCall,
  /**
   * The oracle's calls with Codex's one local tool, `exec_command` (its shell runs in the
   * workspace): files are read with `cat` and written with `printf`, every value single-quoted.
   */
  oracleCall(call) {
    const cmd = oracleShellCommand(call);
    return cmd === undefined ? call : { name: 'exec_command', arguments: { cmd } };
  },
  wireFormat: 'openai-responses',
  cliPackage: '@openai/codex',
  async check(options) {
    return cliCheck(options, { name: 'Codex CLI', packageName: '@openai/codex', missing: { reason: 'Codex CLI is not installed: scripts/install-harnesses.sh codex (or npm i -D @openai/codex)', install: 'bash scripts/install-harnesses.sh codex' } });
  },
  hostPaths(options) {
    return installRootOf(parseWithSchema(CodexOptions, options, 'options of harness').bin);
  },
  version(options, run) {
    const { bin } = parseWithSchema(CodexOptions, options, 'options of harness');
    return installedCliVersion(bin, [bin, '--version'], run);
  },
  async run(ctx) {
    const inv = codexInvocation(ctx, parseWithSchema(CodexOptions, ctx.options, 'options of harness "codex"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, inv.env.CODEX_HOME], { env: inv.env });
    await ctx.sandbox.writeFile(inv.configPath, inv.config);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-codex`: provides the `codex` harness. */
export default definePlugin({
  name: 'clawgym:harness-codex',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(codexHarness);
  },
});

export { classifyCodexCall } from './classify';
