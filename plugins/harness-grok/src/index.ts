import { cliCheck, cliVersion, definePlugin, harnessResult, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyGrokCall } from './classify';

/** Per-rollout options of the Grok CLI harness. */
export const GrokOptions = z.strictObject({
  /** The `grok` executable (its `dist/index.js` when `node` is given) as seen inside the sandbox. */
  bin: z.string().default('grok'),
  /** The Node that runs `bin` when it is a script (the install script's shared Node 24). Default: `bin` runs by its own `#!/usr/bin/env node`. */
  node: z.string().optional(),
  /** Most tool rounds in one run (`--max-tool-rounds`; the CLI's default is 400). */
  maxToolRounds: z.number().int().positive().default(400),
});

/** Command line and environment of one headless Grok CLI rollout. */
export function grokInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, o: z.output<typeof GrokOptions>) {
  const home = ctx.sandbox.homePath;
  // The key and base URL from the environment (never `-k` on the command line). Headless (`-p`)
  // it approves every operation itself; `-d` is its working directory.
  const env = { HOME: home, TMPDIR: `${home}/tmp`, GROK_API_KEY: ctx.endpoint.apiKey, GROK_BASE_URL: `${ctx.endpoint.baseUrl}/v1` };
  const argv = [...(o.node ? [o.node] : []), o.bin, '-p', ctx.instruction, '-d', ctx.sandbox.workspacePath, '-m', ctx.endpoint.model, '--max-tool-rounds', String(o.maxToolRounds)];
  return { argv, env };
}

/** The real Grok CLI (`@vibe-kit/grok-cli`; OpenAI Chat Completions through the OpenAI SDK), headless. */
export const grokHarness: Harness = {
  name: 'grok',
  /** Main agent or side call: see {@link classifyGrokCall}. */
  classifyCall: classifyGrokCall,
  wireFormat: 'openai-chat',
  cliPackage: '@vibe-kit/grok-cli',
  async check(options) {
    return cliCheck(options, { name: 'Grok CLI', packageName: '@vibe-kit/grok-cli', missing: { reason: 'Grok CLI is not installed: scripts/install-harnesses.sh grok', install: 'bash scripts/install-harnesses.sh grok' } });
  },
  hostPaths(options) {
    const o = parseWithSchema(GrokOptions, options, 'options of harness');
    return [...installRootOf(o.bin), ...(o.node ? installRootOf(o.node) : [])];
  },
  version(options, run) {
    const o = parseWithSchema(GrokOptions, options, 'options of harness');
    return cliVersion([...(o.node ? [o.node] : []), o.bin, '--version'], run);
  },
  /** The oracle's calls with Grok's tools (relative paths resolve in `-d`, the workspace). */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'view_file', arguments: { path: a.path } };
      case 'write_file': return { name: 'create_file', arguments: { path: a.path, content: a.content } };
      case 'list_files': return { name: 'bash', arguments: { command: oracleShellCommand(call) } };
      default: return call;
    }
  },
  async run(ctx) {
    const inv = grokInvocation(ctx, parseWithSchema(GrokOptions, ctx.options, 'options of harness "grok"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR], { env: inv.env });
    return harnessResult(await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal }));
  },
};

/** `@clawgym/harness-grok`: provides the `grok` harness. */
export default definePlugin({
  name: 'clawgym:harness-grok',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(grokHarness);
  },
});

export { classifyGrokCall } from './classify';
