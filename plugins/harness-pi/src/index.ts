import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyPiCall } from './classify';

/** Per-rollout options of the Pi harness. */
export const PiOptions = z.strictObject({
  /** The `pi` executable (its `dist/cli.js` when `node` is given) as seen inside the sandbox. */
  bin: z.string().default('pi'),
  /** The Node that runs `bin` when it is a script (the install script's shared Node 24). Default: `bin` runs by its own `#!/usr/bin/env node`. */
  node: z.string().optional(),
  /** The context window Pi is told the model has (tokens); it compacts within `reserveTokens` of it. Default: 128000. */
  contextWindow: z.number().int().positive().default(128_000),
  /** Largest reply Pi asks for (`max_tokens`). Default: 8192. */
  maxTokens: z.number().int().positive().default(8192),
  /** Pi's `compaction.reserveTokens` (room kept for the reply); default Pi's own (16384). */
  reserveTokens: z.number().int().positive().optional(),
  /** Pi's `compaction.keepRecentTokens` (recent context kept verbatim); default Pi's own (20000). */
  keepRecentTokens: z.number().int().positive().optional(),
});
type PiOptions = z.output<typeof PiOptions>;

/** `~/.pi/agent/models.json`: one OpenAI Chat provider at the session; the key read from the environment. */
export function piModels(endpoint: HarnessRunContext['endpoint'], o: Pick<PiOptions, 'contextWindow' | 'maxTokens'>): Record<string, unknown> {
  return {
    providers: {
      clawgym: {
        baseUrl: `${endpoint.baseUrl}/v1`, api: 'openai-completions', apiKey: 'CLAWGYM_API_KEY',
        // The system prompt as a `system` message; no `reasoning_effort` (the proxy's engines take none).
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: endpoint.model, name: endpoint.model, reasoning: false, input: ['text'], contextWindow: o.contextWindow, maxTokens: o.maxTokens }],
      },
    },
  };
}

/** `~/.pi/agent/settings.json`: no install telemetry, compaction as configured. */
export function piSettings(o: Pick<PiOptions, 'reserveTokens' | 'keepRecentTokens'>): Record<string, unknown> {
  return {
    enableInstallTelemetry: false,
    compaction: { enabled: true, ...(o.reserveTokens ? { reserveTokens: o.reserveTokens } : {}), ...(o.keepRecentTokens ? { keepRecentTokens: o.keepRecentTokens } : {}) },
  };
}

/** Command line, environment and files of one headless Pi rollout. */
export function piInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, o: PiOptions) {
  const home = ctx.sandbox.homePath;
  const agentDir = `${home}/.pi/agent`;
  // PI_OFFLINE: no update, package or telemetry requests at start (docs/harnesses.md).
  const env = { HOME: home, TMPDIR: `${home}/tmp`, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1', PI_TELEMETRY: '0', CLAWGYM_API_KEY: ctx.endpoint.apiKey };
  const command = o.node ? [o.node, o.bin] : [o.bin];
  // Pi has no approval prompts: its tools run as the model asks. `--no-session`: nothing kept after the run.
  const argv = [...command, '--provider', 'clawgym', '--model', ctx.endpoint.model, '--mode', 'json', '--no-session', '-p', ctx.instruction];
  return {
    argv, env, agentDir,
    files: { [`${agentDir}/models.json`]: JSON.stringify(piModels(ctx.endpoint, o), null, 2), [`${agentDir}/settings.json`]: JSON.stringify(piSettings(o), null, 2) },
  };
}

/** The real Pi coding agent (OpenAI Chat Completions through a custom provider), headless. */
export const piHarness: Harness = {
  name: 'pi',
  /** Main agent or side call: see {@link classifyPiCall}. */
  classifyCall: classifyPiCall,
  /** The oracle's calls with Pi's tools (relative paths resolve in the workspace, its cwd). */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'read', arguments: { path: a.path } };
      case 'write_file': return { name: 'write', arguments: { path: a.path, content: a.content } };
      case 'list_files': return { name: 'bash', arguments: { command: oracleShellCommand(call) } };
      case 'bash': return { name: 'bash', arguments: { command: a.command } };
      default: return call;
    }
  },
  wireFormat: 'openai-chat',
  cliPackage: '@mariozechner/pi-coding-agent',
  async check(options) {
    return cliCheck(options, { name: 'Pi', packageName: '@mariozechner/pi-coding-agent', missing: { reason: 'Pi is not installed: scripts/install-harnesses.sh pi', install: 'bash scripts/install-harnesses.sh pi' } });
  },
  hostPaths(options) {
    const o = parseWithSchema(PiOptions, options, 'options of harness');
    return [...installRootOf(o.bin), ...(o.node ? installRootOf(o.node) : [])];
  },
  version(options, run) {
    const o = parseWithSchema(PiOptions, options, 'options of harness');
    return installedCliVersion(o.bin, [...(o.node ? [o.node] : []), o.bin, '--version'], run);
  },
  async run(ctx) {
    const inv = piInvocation(ctx, parseWithSchema(PiOptions, ctx.options, 'options of harness "pi"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, inv.agentDir], { env: inv.env });
    for (const [path, text] of Object.entries(inv.files)) await ctx.sandbox.writeFile(path, text);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-pi`: provides the `pi` harness. */
export default definePlugin({
  name: 'clawgym:harness-pi',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(piHarness);
  },
});

export { classifyPiCall } from './classify';
