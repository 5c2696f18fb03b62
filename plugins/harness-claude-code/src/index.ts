import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness } from '@clawgym/core';
import { classifyClaudeCodeCall } from './classify';
import { ClaudeCodeOptions, claudeCodeInvocation } from './invocation';

export { ClaudeCodeOptions, claudeCodeInvocation } from './invocation';
export { classifyClaudeCodeCall } from './classify';

/** The real Claude Code CLI, headless, pointed at the rollout's proxy session. */
export const claudeCodeHarness: Harness = {
  name: 'claude-code',
  wireFormat: 'anthropic-messages',
  cliPackage: '@anthropic-ai/claude-code',
  async check(options) {
    return cliCheck(options, {
      name: 'Claude Code', packageName: '@anthropic-ai/claude-code',
      missing: { reason: 'Claude Code is not installed: scripts/install-harnesses.sh claude-code (npm under Node 24, so it gets the newest release; see docs/harnesses.md)', install: 'bash scripts/install-harnesses.sh claude-code' },
    });
  },
  hostPaths(options) {
    return installRootOf(parseWithSchema(ClaudeCodeOptions, options, 'options of harness "claude-code"').bin);
  },
  version(options, run) {
    const { bin } = parseWithSchema(ClaudeCodeOptions, options, 'options of harness "claude-code"');
    return installedCliVersion(bin, [bin, '--version'], run);
  },
  /** Main agent, subagent, title, memory and other side calls: see {@link classifyClaudeCodeCall}. */
  classifyCall: classifyClaudeCodeCall,
  /**
   * The oracle's calls with Claude Code's tools. Relative paths work: Read and Write resolve
   * them against the working directory, the workspace.
   */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'Read', arguments: { file_path: a.path } };
      case 'write_file': return { name: 'Write', arguments: { file_path: a.path, content: a.content } };
      case 'list_files': return { name: 'Bash', arguments: { command: oracleShellCommand(call) } };
      case 'bash': return { name: 'Bash', arguments: { command: a.command } };
      default: return call;
    }
  },
  async run(ctx) {
    const options = parseWithSchema(ClaudeCodeOptions, ctx.options, 'options of harness "claude-code"');
    const { argv, env, tmpDir } = claudeCodeInvocation(ctx, options);
    await ctx.sandbox.exec(['mkdir', '-p', tmpDir], { env });
    return harnessResult(await ctx.sandbox.exec(argv, { env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal }));
  },
};

/** `@clawgym/harness-claude-code`: provides the `claude-code` harness. */
const claudeCode = definePlugin({
  name: 'clawgym:harness-claude-code',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(claudeCodeHarness);
  },
});
export default claudeCode;
