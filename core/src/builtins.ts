import { z } from 'zod';
import type { EngineProvider } from './contracts/engine';
import type { SandboxProvider } from './contracts/sandbox';
import { onPath } from './util/which';
import { parseWithSchema } from './config/validate';
import { definePlugin } from './kernel/plugin';
import { repliesByTurn, ScriptedEngine, type ScriptedTurn } from './4-proxy/engine/scripted';
import { localSandboxProvider, type LocalSandboxOptions } from './2-sandbox/local';
import { detectMachine, enforcementOf } from './2-sandbox/machine';
import { htmlReporter } from './report/reporters';
import { tensorboardReporter } from './report/tensorboard/reporter';
import { clippedTisLoss } from './9-train/policy-loss';
import { applyFilters, type FilterOptions } from './7-tree/filters';
import { HookStage } from './kernel/hooks';
import type { Kernel } from './kernel/kernel';
import { CORE_VERSION } from './version';
import { ClawGymError, ErrorCodes, messageOf } from './errors';
import { resolve } from 'node:path';

const Turn = z.strictObject({
  text: z.string().optional(),
  thinking: z.string().optional(),
  toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })).optional(),
});

/**
 * `engine: { use: 'scripted', options: { replies: [...] } }`: call N of every session gets reply N
 * (the last repeats); a call without a session (one served over HTTP: `clawgym engine serve`)
 * gets the reply of its conversation's turn, counted by the assistant turns in its prompt.
 */
const ScriptedOptions = z.strictObject({
  replies: z.array(Turn).min(1).default([{ text: 'Hello from the ClawGym scripted engine.' }]),
});

const scripted: EngineProvider = {
  name: 'scripted',
  async create(options) {
    const { replies } = parseWithSchema(ScriptedOptions, options, 'options of engine "scripted"');
    return new ScriptedEngine(repliesByTurn(replies as ScriptedTurn[]));
  },
};

/**
 * The local sandbox with its self-check: it isolates with bubblewrap and, without it, refuses
 * to run unless allowUnisolated says so. The check starts a real bubblewrap sandbox (as the
 * provider does), so a `bwrap` that is installed but cannot work here (no user namespaces in
 * a container) is named as well as a missing one.
 */
function checkedLocalSandbox(options: LocalSandboxOptions): SandboxProvider {
  const local = localSandboxProvider(options);
  return Object.assign(local, {
    async check() {
      let machine;
      try { machine = await detectMachine(options); } catch (e) {
        return { ok: false, reason: messageOf(e), install: 'bash scripts/openclaw-image.sh' };
      }
      const disk = `disk limit ${enforcementOf(machine).disk}`;
      if (machine.mode === 'bubblewrap') return { ok: true, reason: `${machine.bwrapVersion} at ${machine.bwrap}; ${disk}` };
      if (options.allowUnisolated) return { ok: true, reason: `plain processes WITHOUT filesystem isolation (${machine.whyFallback}; allowUnisolated is set)` };
      return {
        ok: false,
        reason: `${machine.whyFallback}: the local sandbox refuses to run rollouts unisolated (sandbox options allowUnisolated: true would run plain processes without file isolation)${onPath('bwrap') ? '; let bubblewrap create user namespaces here, or use the docker sandbox' : ''}`,
        ...(onPath('bwrap') ? {} : { install: 'apt-get install -y bubblewrap' }),
      };
    },
  });
}

/** `sandbox: { use: 'local', options: {...} }`. */
const LocalSandboxOptionsSchema = z.strictObject({
  /** Run plain processes where bubblewrap is missing (refused otherwise: no filesystem isolation). */
  allowUnisolated: z.boolean().optional(),
  /** Folder the sandboxes live in. */
  root: z.string().optional(),
  /** Plain processes even where bubblewrap works (needs allowUnisolated). */
  forceFallback: z.boolean().optional(),
  /** Limits by cgroups where possible (default true). */
  cgroups: z.boolean().optional(),
  /** One holder process per bubblewrap sandbox that runs its commands (default true, as root; docs/sandboxes.md). */
  holder: z.boolean().optional(),
  /** Holders started ahead per sandbox shape (default 2; 0: none). */
  warmPool: z.number().int().min(0).max(64).optional(),
  /** A root filesystem (the OpenClaw image's) whose system sandboxes see instead of the host's (relative to the config's folder). */
  rootfs: z.string().min(1).optional(),
  /** What one sandbox may write in all (default '1g'; a number is MiB; false or 0: no limit). */
  diskLimit: z.union([z.string().min(1), z.number().min(0), z.literal(false)]).optional(),
});

/**
 * What ships with core, loaded into every kernel like any plugin: the scripted engine, the local
 * sandbox (bubblewrap; plain processes only with allowUnisolated), the `tensorboard` and `html`
 * reporters, the `clipped-tis` policy loss, and the built-in tree filters (the config's `tree`
 * section) as the first tap on `onTreeBuilt`, so plugins' taps see filtered trees. The
 * composition root (`run/create-kernel.ts`) applies them; the kernel itself knows no provider.
 */
export const builtins = definePlugin({
  name: 'clawgym:core',
  options: z.strictObject({ localSandbox: LocalSandboxOptionsSchema.optional(), tree: z.custom<FilterOptions>((v) => typeof v === 'object' && v !== null) }),
  apply(api, options) {
    api.hooks.onTreeBuilt.tap({ stage: HookStage.EARLY }, (tree) => applyFilters(tree, options.tree));
    api.provide.engine(scripted);
    api.provide.sandbox(checkedLocalSandbox({ ...options.localSandbox, log: (m) => api.log.warn(m) }));
    api.provide.reporter(tensorboardReporter());
    api.provide.reporter(htmlReporter);
    api.provide.policyLoss(clippedTisLoss);
  },
});

/** Apply core's built-ins to a kernel, as the `@clawgym/core` package. */
export function useBuiltins(kernel: Kernel): Promise<void> {
  // The local sandbox is core's: its slot's options (e.g. allowUnisolated) configure it here.
  const slot = kernel.config.sandbox;
  const parsed = typeof slot !== 'string' && slot.use === 'local' ? parseWithSchema(LocalSandboxOptionsSchema, slot.options, 'sandbox.options') : undefined;
  const local = parsed?.rootfs === undefined ? parsed : { ...parsed, rootfs: resolve(kernel.config.rootDir, parsed.rootfs) };
  return kernel.use(builtins({ ...(local ? { localSandbox: local } : {}), tree: kernel.config.tree }), { packageName: '@clawgym/core', version: CORE_VERSION });
}
