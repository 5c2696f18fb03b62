import { cliCheck, installedCliVersion, definePlugin, harnessResult, installRootOf, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyGeminiCliCall } from './classify';

/** Per-rollout options of the Gemini CLI harness. */
export const GeminiCliOptions = z.strictObject({
  /** The `gemini` executable (its `bundle/gemini.js` when `node` is given) as seen inside the sandbox. */
  bin: z.string().default('gemini'),
  /** The Node that runs `bin` when it is a script (the install script's shared Node 24). Default: `bin` runs by its own `#!/usr/bin/env node`. */
  node: z.string().optional(),
});
type GeminiCliOptions = z.output<typeof GeminiCliOptions>;

/**
 * `~/.gemini/settings.json` for one rollout: API-key auth (the key and base URL come from the
 * environment), no usage statistics, telemetry or update checks (docs/harnesses.md).
 */
export const GEMINI_SETTINGS: Record<string, unknown> = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

/** Command line and environment of one headless Gemini CLI rollout. */
export function geminiInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, o: GeminiCliOptions) {
  const home = ctx.sandbox.homePath;
  // GOOGLE_GEMINI_BASE_URL: the API root (`<base>/v1beta/models/<model>:<method>`); GEMINI_API_KEY
  // goes out as `x-goog-api-key`. GEMINI_CLI_TRUST_WORKSPACE: headless runs in an untrusted
  // folder would otherwise refuse its settings.
  const env = {
    HOME: home, TMPDIR: `${home}/tmp`, GOOGLE_GEMINI_BASE_URL: ctx.endpoint.baseUrl, GEMINI_API_KEY: ctx.endpoint.apiKey,
    GEMINI_CLI_TRUST_WORKSPACE: 'true', NO_BROWSER: '1',
  };
  const command = o.node ? [o.node, o.bin] : [o.bin];
  // `--yolo`: every tool call approved (Gemini CLI's auto-approval); `-m`: the session's model, so
  // no routing call picks another.
  const argv = [...command, '-m', ctx.endpoint.model, '--yolo', '--skip-trust', '-o', 'json', '-p', ctx.instruction];
  return { argv, env, settingsPath: `${home}/.gemini/settings.json`, settings: GEMINI_SETTINGS };
}

/** The real Gemini CLI (Google's `generateContent`, streamed), headless. */
export const geminiCliHarness: Harness = {
  name: 'gemini-cli',
  /** Main agent or side call, from recorded requests: see {@link classifyGeminiCliCall}. */
  classifyCall: classifyGeminiCliCall,
  /** The oracle's calls with Gemini CLI's tools (relative paths resolve in the workspace, its target directory). */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'read_file', arguments: { file_path: a.path } };
      case 'write_file': return { name: 'write_file', arguments: { file_path: a.path, content: a.content } };
      case 'list_files': return { name: 'list_directory', arguments: { dir_path: a.path ?? '.' } };
      case 'bash': return { name: 'run_shell_command', arguments: { command: a.command } };
      default: return call;
    }
  },
  wireFormat: 'gemini-generate-content',
  cliPackage: '@google/gemini-cli',
  async check(options) {
    return cliCheck(options, { name: 'Gemini CLI', packageName: '@google/gemini-cli', missing: { reason: 'Gemini CLI is not installed: scripts/install-harnesses.sh gemini-cli', install: 'bash scripts/install-harnesses.sh gemini-cli' } });
  },
  hostPaths(options) {
    const o = parseWithSchema(GeminiCliOptions, options, 'options of harness');
    return [...installRootOf(o.bin), ...(o.node ? installRootOf(o.node) : [])];
  },
  version(options, run) {
    const o = parseWithSchema(GeminiCliOptions, options, 'options of harness');
    return installedCliVersion(o.bin, [...(o.node ? [o.node] : []), o.bin, '--version'], run);
  },
  async run(ctx) {
    const inv = geminiInvocation(ctx, parseWithSchema(GeminiCliOptions, ctx.options, 'options of harness "gemini-cli"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, `${ctx.sandbox.homePath}/.gemini`], { env: inv.env });
    await ctx.sandbox.writeFile(inv.settingsPath, JSON.stringify(inv.settings));
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-gemini-cli`: provides the `gemini-cli` harness. */
export default definePlugin({
  name: 'clawgym:harness-gemini-cli',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(geminiCliHarness);
  },
});

export { classifyGeminiCliCall } from './classify';
