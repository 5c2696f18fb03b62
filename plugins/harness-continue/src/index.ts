import { cliCheck, cliVersion, definePlugin, harnessResult, installRootOf, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyContinueCall } from './classify';

/** Per-rollout options of the Continue harness. */
export const ContinueOptions = z.strictObject({
  /** The `cn` executable (its `dist/cn.js` when `node` is given) as seen inside the sandbox. */
  bin: z.string().default('cn'),
  /** The Node that runs `bin` when it is a script (the install script's shared Node 24). Default: `bin` runs by its own `#!/usr/bin/env node`. */
  node: z.string().optional(),
  /** The context window Continue is told the model has (tokens, the model's `defaultCompletionOptions.contextLength`). Default: 128000. */
  contextLimit: z.number().int().positive().default(128_000),
  /** Largest reply Continue asks for (`defaultCompletionOptions.maxTokens`). Default: 8192. */
  outputLimit: z.number().int().positive().default(8192),
});

/**
 * `config.yaml` for one rollout (written as JSON, which YAML reads): one model of provider
 * `openai` at the session, its key a secret that Continue resolves from the environment
 * (`CLAWGYM_API_KEY`), never written down.
 */
export function continueConfig(endpoint: HarnessRunContext['endpoint'], o: Pick<z.output<typeof ContinueOptions>, 'contextLimit' | 'outputLimit'>): Record<string, unknown> {
  return {
    name: 'clawgym', version: '1.0.0', schema: 'v1',
    models: [{
      name: 'clawgym', provider: 'openai', model: endpoint.model, apiBase: `${endpoint.baseUrl}/v1`,
      apiKey: '${{ secrets.CLAWGYM_API_KEY }}',
      roles: ['chat', 'edit', 'apply', 'summarize'],
      defaultCompletionOptions: { contextLength: o.contextLimit, maxTokens: o.outputLimit },
    }],
  };
}

/** Environment switches that keep Continue from reaching outside hosts (names read in its 1.5.47 bundle). */
export const CONTINUE_OFFLINE_ENV = { CONTINUE_CLI_ENABLE_TELEMETRY: '0', CONTINUE_METRICS_ENABLED: '0', CONTINUE_CLI_AUTO_UPDATED: 'true' } as const;

/** Command line and environment of one headless Continue rollout. */
export function continueInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, o: z.output<typeof ContinueOptions>) {
  const home = ctx.sandbox.homePath;
  const configPath = `${home}/.continue/config.yaml`;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, CONTINUE_GLOBAL_DIR: `${home}/.continue`, CLAWGYM_API_KEY: ctx.endpoint.apiKey, ...CONTINUE_OFFLINE_ENV };
  // `-p` runs headless and prints the answer; `--auto` allows every tool. It works in its current
  // directory, the workspace.
  const argv = [...(o.node ? [o.node] : []), o.bin, '-p', '--auto', '--config', configPath, ctx.instruction];
  return { argv, env, configPath, config: JSON.stringify(continueConfig(ctx.endpoint, o), null, 2) };
}

/** The real Continue CLI (`@continuedev/cli`, `cn`; OpenAI Chat Completions), headless. */
export const continueHarness: Harness = {
  name: 'continue',
  /** Main agent or side call, from recorded requests: see {@link classifyContinueCall}. */
  classifyCall: classifyContinueCall,
  wireFormat: 'openai-chat',
  cliPackage: '@continuedev/cli',
  async check(options) {
    return cliCheck(options, { name: 'Continue', packageName: '@continuedev/cli', missing: { reason: 'Continue is not installed: scripts/install-harnesses.sh continue', install: 'bash scripts/install-harnesses.sh continue' } });
  },
  hostPaths(options) {
    const o = parseWithSchema(ContinueOptions, options, 'options of harness');
    return [...installRootOf(o.bin), ...(o.node ? installRootOf(o.node) : [])];
  },
  version(options, run) {
    const o = parseWithSchema(ContinueOptions, options, 'options of harness');
    return cliVersion([...(o.node ? [o.node] : []), o.bin, '--version'], run);
  },
  /** The oracle's calls with Continue's tools (it runs in the workspace: relative paths resolve there). */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'Read', arguments: { filepath: a.path } };
      case 'write_file': return { name: 'Write', arguments: { filepath: a.path, content: a.content } };
      case 'list_files': return { name: 'List', arguments: { dirpath: a.path ?? '.' } };
      case 'bash': return { name: 'Bash', arguments: { command: a.command } };
      default: return call;
    }
  },
  async run(ctx) {
    const inv = continueInvocation(ctx, parseWithSchema(ContinueOptions, ctx.options, 'options of harness "continue"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, inv.env.CONTINUE_GLOBAL_DIR], { env: inv.env });
    await ctx.sandbox.writeFile(inv.configPath, inv.config);
    return harnessResult(await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal }));
  },
};

/** `@clawgym/harness-continue`: provides the `continue` harness. */
export default definePlugin({
  name: 'clawgym:harness-continue',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(continueHarness);
  },
});

export { classifyContinueCall } from './classify';
