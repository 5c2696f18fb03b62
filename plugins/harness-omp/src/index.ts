import { cliCheck, definePlugin, harnessResult, installedCliVersion, installRootOf, oracleShellCommand, parseWithSchema, z, type Harness, type HarnessRunContext } from '@clawgym/core';
import { classifyOmpCall } from './classify';

/** Per-rollout options of the oh-my-pi harness. */
export const OmpOptions = z.strictObject({
  /** oh-my-pi's script, `@oh-my-pi/pi-coding-agent/dist/cli.js`, as seen inside the sandbox (run by `bun`). */
  bin: z.string().default('omp'),
  /** The Bun that runs `bin` (the install script's, from the registry's `bun` package). Default: `bin` runs by its own `#!/usr/bin/env bun`. */
  bun: z.string().optional(),
  /** The context window oh-my-pi is told the model has (tokens). Default: 128000. */
  contextWindow: z.number().int().positive().default(128_000),
  /** Largest reply oh-my-pi asks for (`max_completion_tokens`). Default: 8192. */
  maxTokens: z.number().int().positive().default(8192),
  /** Context size (tokens) past which oh-my-pi compacts the session (`compaction.thresholdTokens`); default its own (the window less its reserve). */
  compactionThresholdTokens: z.number().int().positive().optional(),
});
type OmpOptions = z.output<typeof OmpOptions>;

/**
 * The oh-my-pi release a project installs (doctor's hint), as scripts/install-harnesses.sh pins it:
 * the newest, 18.3.4, names `@oh-my-pi/omp-stats@18.3.4`, which the registry does not hold (ETARGET).
 */
export const OMP_CLI_VERSION = '18.2.3';

/** The provider id oh-my-pi is configured with (`--model clawgym/<model>`). */
const PROVIDER = 'clawgym';
/** The variable the provider's `apiKey` names: oh-my-pi reads a key that is a variable's name from the environment. */
const KEY_VARIABLE = 'CLAWGYM_API_KEY';

/**
 * `models.json` in oh-my-pi's agent folder (Pi's custom provider, which its fork reads unchanged):
 * one OpenAI Chat provider at the session, the key named by its variable.
 */
export function ompModels(endpoint: HarnessRunContext['endpoint'], o: Pick<OmpOptions, 'contextWindow' | 'maxTokens'>): Record<string, unknown> {
  return {
    providers: {
      [PROVIDER]: {
        baseUrl: `${endpoint.baseUrl}/v1`, api: 'openai-completions', apiKey: KEY_VARIABLE,
        // The system prompt as a `system` message; no `reasoning_effort` (the proxy's engines take none).
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: endpoint.model, name: endpoint.model, reasoning: false, input: ['text'], contextWindow: o.contextWindow, maxTokens: o.maxTokens }],
      },
    },
  };
}

/**
 * `config.yml` in the agent folder (JSON is YAML): no update check or setup wizard at start;
 * no background jobs (`async.enabled: false`): a `task` call then waits for its subagents and
 * returns their results, where by default it spawns them in the background and a headless run
 * ends, and kills them, as soon as the main agent stops; compaction at the threshold given.
 */
export function ompSettings(o: Pick<OmpOptions, 'compactionThresholdTokens'>): Record<string, unknown> {
  return {
    startup: { checkUpdate: false, setupWizard: false },
    async: { enabled: false },
    ...(o.compactionThresholdTokens ? { compaction: { enabled: true, thresholdTokens: o.compactionThresholdTokens } } : {}),
  };
}

/** Command line, environment and files of one headless oh-my-pi rollout. */
export function ompInvocation(ctx: Pick<HarnessRunContext, 'sandbox' | 'endpoint' | 'instruction'>, o: OmpOptions) {
  const home = ctx.sandbox.homePath;
  const agentDir = `${home}/.omp/agent`;
  const env = { HOME: home, TMPDIR: `${home}/tmp`, PI_CODING_AGENT_DIR: agentDir, PI_NO_TITLE: '1', [KEY_VARIABLE]: ctx.endpoint.apiKey };
  const command = o.bun ? [o.bun, o.bin] : [o.bin];
  // `-p`: headless, prints the reply; `--auto-approve`: every tool runs as the model asks (the sandbox is
  // the boundary); `--no-session`: nothing kept; `--no-title`: no session-title call.
  const argv = [...command, '--model', `${PROVIDER}/${ctx.endpoint.model}`, '--no-session', '--auto-approve', '--no-title', '--cwd', ctx.sandbox.workspacePath, '-p', ctx.instruction];
  return {
    argv, env, agentDir,
    files: { [`${agentDir}/models.json`]: JSON.stringify(ompModels(ctx.endpoint, o), null, 2), [`${agentDir}/config.yml`]: JSON.stringify(ompSettings(o), null, 2) },
  };
}

/** The real oh-my-pi coding agent (a Bun fork of Pi; OpenAI Chat Completions through Pi's custom provider), headless. */
export const ompHarness: Harness = {
  name: 'omp',
  /** Main agent or side call, from recorded requests: see {@link classifyOmpCall}. */
  classifyCall: classifyOmpCall,
  /**
   * The oracle's calls with oh-my-pi's tools, each with the intent (`i`) every one of them
   * requires; relative paths resolve in the workspace, its `--cwd`.
   */
  oracleCall(call) {
    const a = call.arguments;
    switch (call.name) {
      case 'read_file': return { name: 'read', arguments: { i: 'Reading the file', path: a.path } };
      case 'write_file': return { name: 'write', arguments: { i: 'Writing the file', path: a.path, content: a.content } };
      case 'list_files': return { name: 'bash', arguments: { i: 'Listing the files', command: oracleShellCommand(call) } };
      case 'bash': return { name: 'bash', arguments: { i: 'Running a command', command: a.command } };
      default: return call;
    }
  },
  wireFormat: 'openai-chat',
  cliPackage: '@oh-my-pi/pi-coding-agent',
  /** The CLI's script, and the Bun that runs it where one is named (a Bun program cannot start without it). */
  async check(options) {
    const missing = { reason: 'oh-my-pi is not installed: scripts/install-harnesses.sh omp', install: 'bash scripts/install-harnesses.sh omp' };
    const cli = cliCheck(options, { name: 'oh-my-pi', packageName: '@oh-my-pi/pi-coding-agent', packageVersion: OMP_CLI_VERSION, missing });
    const bun = options?.bun;
    if (!cli.ok || typeof bun !== 'string' || bun === '') return cli;
    const runtime = cliCheck({ bin: bun }, { name: 'oh-my-pi\'s Bun', packageName: 'bun', missing });
    return runtime.ok ? cli : runtime;
  },
  hostPaths(options) {
    const o = parseWithSchema(OmpOptions, options, 'options of harness');
    return [...new Set([...installRootOf(o.bin), ...(o.bun ? installRootOf(o.bun) : [])])];
  },
  version(options, run) {
    const o = parseWithSchema(OmpOptions, options, 'options of harness');
    return installedCliVersion(o.bin, [...(o.bun ? [o.bun] : []), o.bin, '--version'], run);
  },
  async run(ctx) {
    const inv = ompInvocation(ctx, parseWithSchema(OmpOptions, ctx.options, 'options of harness "omp"'));
    await ctx.sandbox.exec(['mkdir', '-p', inv.env.TMPDIR, inv.agentDir], { env: inv.env });
    for (const [path, text] of Object.entries(inv.files)) await ctx.sandbox.writeFile(path, text);
    const r = await ctx.sandbox.exec(inv.argv, { env: inv.env, stdin: '', timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return harnessResult(r);
  },
};

/** `@clawgym/harness-omp`: provides the `omp` harness. */
export default definePlugin({
  name: 'clawgym:harness-omp',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(ompHarness);
  },
});

export { classifyOmpCall } from './classify';
