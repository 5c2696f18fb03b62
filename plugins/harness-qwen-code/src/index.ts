import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyQwenCodeCall } from './classify';

/** Per-rollout options of the Qwen Code harness. */
export const QwenCodeOptions = z.strictObject({
  /** The `qwen` executable as seen inside the sandbox. */
  bin: z.string().default('qwen'),
  /**
   * The Node that runs `bin` when it is a script (Qwen Code >= 0.16 needs Node >= 22; the
   * install script's shared Node 24). Default: `bin` runs by its own `#!/usr/bin/env node`.
   */
  node: z.string().optional(),
});

/** Settings that keep Qwen Code from sending usage data or checking for updates (docs/harnesses.md). */
export const QWEN_SETTINGS = { privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false }, general: { enableAutoUpdate: false } };

/** Command line and environment of one headless Qwen Code rollout. */
export function qwenInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, options: z.output<typeof QwenCodeOptions>) {
  const home = ctx.sandbox.homePath;
  const env = {
    HOME: home, TMPDIR: `${home}/tmp`,
    OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey, OPENAI_MODEL: ctx.endpoint.model,
  };
  const command = options.node ? [options.node, options.bin] : [options.bin];
  return { argv: [...command, '--auth-type', 'openai', '--yolo', '-o', 'json', ctx.instruction], env, settingsPath: `${home}/.qwen/settings.json` };
}

/** The real Qwen Code CLI (OpenAI Chat Completions), headless. */
export const qwenCodeHarness: Harness = {
  name: 'qwen-code',
  /** Main agent or side call, from recorded requests: see {@link classifyQwenCodeCall}. */
  classifyCall: classifyQwenCodeCall,
  /**
   * The oracle's calls with Qwen Code's shell, `run_shell_command` (it runs in the workspace):
   * its `read_file` and `write_file` refuse a relative path ("File path must be absolute"), and
   * the oracle's paths are relative to a workspace it does not know. Files are read with `cat`
   * and written with `printf`, every value single-quoted.
   */
  oracleCall(call) {
    const command = oracleShellCommand(call);
    return command === undefined ? call : { name: 'run_shell_command', arguments: { command } };
  },
  wireFormat: 'openai-chat',
  cliPackage: '@qwen-code/qwen-code',
  async check(options) {
    return cliCheck(options, { name: 'Qwen Code', packageName: '@qwen-code/qwen-code', missing: { reason: 'Qwen Code is not installed: scripts/install-harnesses.sh qwen-code', install: 'bash scripts/install-harnesses.sh qwen-code' } });
  },
  hostPaths(options) {
    const o = parseWithSchema(QwenCodeOptions, options, 'options of harness');
    return [...installRootOf(o.bin), ...(o.node ? installRootOf(o.node) : [])];
  },
  version(options, run) {
    const o = parseWithSchema(QwenCodeOptions, options, 'options of harness');
    return installedCliVersion(o.bin, [...(o.node ? [o.node] : []), o.bin, '--version'], run);
  },
  async run(ctx) {
    const inv = qwenInvocation(ctx, parseWithSchema(QwenCodeOptions, ctx.options, 'options of harness "qwen-code"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR], { env: inv.env });
    await ctx.sandbox.writeFile(inv.settingsPath, JSON.stringify(QWEN_SETTINGS));
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-qwen-code`: provides the `qwen-code` harness. */
export default definePlugin({
  name: 'clawgym:harness-qwen-code',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(qwenCodeHarness);
  },
});

export { classifyQwenCodeCall } from './classify';
