import { bubblewrapPath } from '../2-sandbox/machine';
import { netnsAvailable } from '../2-sandbox/netns';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Where `scripts/install-harnesses.sh` puts the real CLIs: `CLAWGYM_HARNESS_DIR`, the one
 * variable both the script and these tests read.
 */
export const HARNESS_DIR = process.env.CLAWGYM_HARNESS_DIR ?? resolve(__dirname, '..', '..', '..', '.harnesses');

/** The Node 24 the install script shares between the CLIs that are Node scripts. */
const NODE24 = 'node24/node_modules/node/bin/node';

/**
 * Each CLI's install path under HARNESS_DIR: `bin` its executable (or script), `node` the runtime
 * that runs that script where it needs one, `binOption` and `runtimeOption` the names its plugin
 * gives those two options (default `bin` and `node`).
 */
const LAYOUT: Record<string, { bin: string; node?: string; binOption?: string; runtimeOption?: string }> = {
  'claude-code': { bin: 'claude-code/node_modules/.bin/claude' },
  // Its plugin names the script `entry`.
  openclaw: { bin: 'openclaw/node_modules/openclaw/openclaw.mjs', node: NODE24, binOption: 'entry' },
  codex: { bin: 'codex/node_modules/.bin/codex' },
  // Qwen Code >= 0.16 needs Node >= 22: its entry runs under the shared Node 24.
  'qwen-code': { bin: 'qwen-code/node_modules/@qwen-code/qwen-code/cli-entry.js', node: NODE24 },
  // A native binary, linked over the package's bin by its postinstall.
  opencode: { bin: 'opencode/node_modules/opencode-ai/bin/opencode.exe' },
  'gemini-cli': { bin: 'gemini-cli/node_modules/@google/gemini-cli/bundle/gemini.js', node: NODE24 },
  pi: { bin: 'pi/node_modules/@mariozechner/pi-coding-agent/dist/cli.js', node: NODE24 },
  // A native binary (an OpenCode fork), linked to bin/.kilo by @kilocode/cli's postinstall.
  kilo: { bin: 'kilo/node_modules/@kilocode/cli/bin/.kilo' },
  grok: { bin: 'grok/node_modules/@vibe-kit/grok-cli/dist/index.js', node: NODE24 },
  // A native binary (Bun), linked to bin/.cline by cline's postinstall.
  cline: { bin: 'cline/node_modules/cline/bin/.cline' },
  continue: { bin: 'continue/node_modules/@continuedev/cli/dist/cn.js', node: NODE24 },
  // A native binary, hard-linked over droid's bin/droid by its postinstall.
  droid: { bin: 'droid/node_modules/droid/bin/droid' },
  // The native binary of @github/copilot's platform package (its npm-loader.js only finds and starts it).
  copilot: { bin: 'copilot/node_modules/@github/copilot-linux-x64/copilot' },
  // A Bun program: its script runs under the Bun installed beside it (the registry's `bun` package),
  // which its plugin names `bun`.
  omp: { bin: 'omp/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js', node: 'omp/node_modules/bun/bin/bun.exe', runtimeOption: 'bun' },
};

/**
 * Every real harness whose CLI `scripts/install-harnesses.sh` installs (CI installs them all):
 * the one list that tests and `bench:harness-overhead` enumerate. Its plugin is `plugins/harness-<name>`.
 */
export const REAL_HARNESSES: readonly string[] = Object.keys(LAYOUT);

/**
 * The installed CLI of a real harness, or why it is not there. Tests that need one skip with
 * that reason on a user's machine — and fail in CI (`CI=true`), where nothing may skip.
 */
export function installedHarness(name: keyof typeof LAYOUT | string): { bin: string; node?: string } | { missing: string } {
  const l = LAYOUT[name];
  if (!l) return { missing: `unknown harness ${name}` };
  const bin = join(HARNESS_DIR, l.bin);
  const node = l.node ? join(HARNESS_DIR, l.node) : undefined;
  if (!existsSync(bin) || (node && !existsSync(node))) {
    return { missing: `${name} is not installed in ${HARNESS_DIR}: run scripts/install-harnesses.sh ${name}` };
  }
  return { bin, node };
}

/**
 * The options that point a harness's plugin at its installed CLI (`bin`, or `entry` for OpenClaw,
 * and `node` where the CLI runs under the shared Node 24, `bun` for oh-my-pi's Bun), or undefined
 * when it is not installed.
 */
export function installedHarnessOptions(name: string): Record<string, string> | undefined {
  const cli = installedHarness(name);
  if ('missing' in cli) return undefined;
  const l = LAYOUT[name]!;
  return { [l.binOption ?? 'bin']: cli.bin, ...(cli.node ? { [l.runtimeOption ?? 'node']: cli.node } : {}) };
}

/**
 * What a test whose prerequisite is `missing` does: `run` (nothing is missing), `skip` visibly
 * (on a user's machine) or `fail` (in CI, `CI=true`, where nothing may skip).
 */
export function outcomeWhenMissing(missing: string | undefined, env: NodeJS.ProcessEnv = process.env): 'run' | 'skip' | 'fail' {
  if (!missing) return 'run';
  return env.CI === 'true' ? 'fail' : 'skip';
}

/** `describe` that skips, visibly, when a prerequisite is missing — except in CI, where it fails. */
export function describeIf(missing: string | undefined, name: string, body: () => void): void {
  if (outcomeWhenMissing(missing) !== 'skip') {
    describe(name, () => {
      if (missing) it('has what it needs', () => { throw new Error(`required in CI: ${missing}`); });
      else body();
    });
    return;
  }
  // eslint-disable-next-line no-console
  console.warn(`skipping "${name}": ${missing}`);
  describe.skip(`${name} (skipped: ${missing})`, body);
}

/**
 * What a real-harness end-to-end test needs: the installed CLI, and a network namespace for
 * the sandbox. `missing` says what is absent (for {@link describeIf}).
 */
/**
 * Why a test that needs bubblewrap cannot run here, or undefined: the local sandbox's isolation,
 * and so every rollout of `clawgym eval` / `run` with the default sandbox, needs it.
 */
export function bubblewrapMissing(): string | undefined {
  return bubblewrapPath() ? undefined : 'bubblewrap is not installed (apt-get install bubblewrap)';
}

export function harnessE2ePrerequisites(name: string): { cli: ReturnType<typeof installedHarness>; missing?: string } {
  const cli = installedHarness(name);
  const ns = netnsAvailable();
  return { cli, missing: 'missing' in cli ? cli.missing : ns.ok ? undefined : ns.reason };
}
