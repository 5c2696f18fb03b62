import { cliCheck, installedCliVersion, definePlugin, harnessResult, installRootOf, parseWithSchema, z, type Harness } from '@clawgym/core';
import { classifyOpenClawCall } from './classify';
import { OpenClawOptions, openClawInvocation } from './invocation';

export { OpenClawOptions, openClawConfig, openClawInvocation } from './invocation';

/** The real OpenClaw CLI (on Node 24), headless, with a config generated per rollout. */
export const openClawHarness: Harness = {
  name: 'openclaw',
  /** Main agent or side call, from recorded requests: see {@link classifyOpenClawCall}. */
  classifyCall: classifyOpenClawCall,
  /** The oracle's calls with OpenClaw's tools (relative paths resolve in `--cwd`, the workspace). */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'read', arguments: { path: a.path } };
      case 'write_file': return { name: 'write', arguments: { path: a.path, content: a.content } };
      case 'list_files': return { name: 'ls', arguments: { path: a.path ?? '.' } };
      case 'bash': return { name: 'exec', arguments: { command: a.command } };
      default: return call;
    }
  },
  wireFormat: 'openai-chat',
  cliPackage: 'openclaw',
  async check(options) {
    // The CLI a config names is its `entry` (there is no `bin`): checked where it is; without a
    // path, the `openclaw` package of the project.
    const entry = typeof options?.entry === 'string' ? options.entry : '';
    return cliCheck(entry.includes('/') ? { bin: entry } : {}, { name: 'OpenClaw', packageName: 'openclaw', missing: { reason: 'OpenClaw is not installed: npm i -D openclaw node@24 (it needs Node ≥ 24.16, which the npm node package ships)', install: 'npm i -D openclaw node@24' }, binInstall: 'bash scripts/install-harnesses.sh openclaw' });
  },
  hostPaths(options) {
    const o = parseWithSchema(OpenClawOptions, options, 'options of harness "openclaw"');
    return [...installRootOf(o.entry), ...installRootOf(o.node)];
  },
  version(options, run) {
    const o = parseWithSchema(OpenClawOptions, options, 'options of harness "openclaw"');
    // As the rollout runs it (invocation.ts): a script under the given Node, an executable itself.
    return installedCliVersion(o.entry, [...(/\.(c|m)?js$/.test(o.entry) ? [o.node] : []), o.entry, '--version'], run);
  },
  async run(ctx) {
    const options = parseWithSchema(OpenClawOptions, ctx.options, 'options of harness "openclaw"');
    const inv = openClawInvocation(ctx, options);
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR], { env: inv.env });
    await ctx.sandbox.writeFile(inv.configPath, JSON.stringify(inv.config, null, 2));
    const result = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    // OpenClaw exits 2 on its own timeout.
    return { ...harnessResult(result), timedOut: result.timedOut || result.exitCode === 2 };
  },
};

/** `@clawgym/harness-openclaw`: provides the `openclaw` harness. */
const openclaw = definePlugin({
  name: 'clawgym:harness-openclaw',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(openClawHarness);
  },
});
export default openclaw;

export { classifyOpenClawCall } from './classify';
