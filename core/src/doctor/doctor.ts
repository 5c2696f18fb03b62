import type { ProviderCheck } from '../contracts/check';
import type { ResolvedConfig } from '../config/schema';
import { isClawGymError, messageOf } from '../errors';
import { provider, slotName, type SlotRef } from '../kernel/create';
import type { Kernel } from '../kernel/kernel';
import type { PluginKind } from '../contracts/plugin';
import { pluginCandidates } from '../kernel/resolve';
import { CLAWGYM_PACKAGES } from '../kernel/shipped';
import { createKernel } from '../run/create-kernel';
import type { Harness } from '../contracts/harness';
import { checkClisInSandbox } from './cli-in-sandbox';

/** One line of `clawgym doctor`: a thing the config needs, and whether this machine has it. */
export interface DoctorRow {
  /** `ok`, `missing`, or `unknown` (the provider has no self-check). */
  status: 'ok' | 'missing' | 'unknown';
  /** What was checked, e.g. `sandbox local`, `harness claude-code`. */
  what: string;
  detail: string;
  /** The command that installs what is missing. */
  install?: string;
}

const row = (what: string, check: ProviderCheck): DoctorRow => ({
  status: check.ok ? 'ok' : 'missing', what, detail: check.reason ?? (check.ok ? 'ready' : 'not ready'), ...(check.ok || !check.install ? {} : { install: check.install }),
});

/** Resolve a slot's provider; a package that is not installed becomes a `missing` row with its npm install. */
async function resolveSlot<K extends PluginKind>(kernel: Kernel, kind: K, slot: SlotRef, rows: DoctorRow[]) {
  const name = slotName(slot);
  try {
    const value = await provider(kernel, kind, slot);
    const origin = kernel.registry.entries(kind).find((e) => e.name === name)?.origin;
    rows.push({ status: 'ok', what: `${kind} ${name}`, detail: origin ? `from ${origin.packageName}${origin.version ? `@${origin.version}` : ''}` : 'registered' });
    return value;
  } catch (err) {
    rows.push({
      status: 'missing', what: `${kind} ${name}`, detail: isClawGymError(err) ? err.message : messageOf(err),
      ...(installCommand(name, kind) ? { install: installCommand(name, kind) } : {}),
    });
    return undefined;
  }
}

/**
 * The npm install of a missing provider: the first candidate package that ClawGym publishes
 * (`embedded` as a trainer → `@clawgym/engine-embedded`, which provides it), or none when no
 * ClawGym package has that name; the row's detail then lists every package name tried.
 */
export function installCommand(name: string, kind: PluginKind): string | undefined {
  const published = pluginCandidates(name, kind).find((c) => CLAWGYM_PACKAGES.includes(c));
  return published ? `npm i -D ${published}` : undefined;
}

export interface DoctorOptions {
  /** Leave out the engine slot (evaluation with its own oracle or null engine). */
  skipEngine?: boolean;
}

/**
 * What the current config needs and whether this machine has it: Node, every slot's provider
 * (installed plugin packages), each harness's own check (`Harness.check`), the sandbox's
 * (`SandboxProvider.check`), with the command that installs whatever is missing.
 */
export async function doctor(config: ResolvedConfig, options: DoctorOptions = {}): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  // The launcher hands an older Node over to the project's Node 24, so this row fails only
  // when ClawGym is used as a library on an old Node.
  rows.push(row('node', major >= 22 ? { ok: true, reason: `Node ${process.versions.node}` }
    : { ok: false, reason: `Node ${process.versions.node}; ClawGym needs Node 22 or 24`, install: 'npm install node@24' }));
  const kernel = await createKernel(config, { runId: 'doctor', logger: { info: () => {}, warn: () => {} } });
  try {
    const sandbox = await resolveSlot(kernel, 'sandbox', config.sandbox, rows);
    if (sandbox) {
      rows.push(sandbox.check ? row(`sandbox ${sandbox.name}: isolation`, await sandbox.check())
        : { status: 'unknown', what: `sandbox ${sandbox.name}: isolation`, detail: 'the provider has no self-check' });
    }
    // A sandbox on a system of its own (an image): the CLIs are looked for in it, not here.
    const system = sandbox?.systemOf?.();
    const inSandbox: { harness: Harness; options: Record<string, unknown>; at: number }[] = [];
    for (const slot of [...config.harnesses, ...(config.run.evalHarnesses ?? [])]) {
      if (rows.some((r) => r.what === `harness ${slotName(slot)}`)) continue;
      const harness = await resolveSlot(kernel, 'harness', slot, rows);
      const options = typeof slot === 'object' && 'options' in slot ? slot.options as Record<string, unknown> | undefined : undefined;
      if (harness && system !== undefined) inSandbox.push({ harness, options: options ?? {}, at: rows.push({ status: 'unknown', what: `harness ${harness.name}: CLI`, detail: '' }) - 1 });
      else if (harness) rows.push(row(`harness ${harness.name}: CLI`, await harness.check(options).catch((err: unknown) => ({ ok: false, reason: messageOf(err) }))));
    }
    if (sandbox && system !== undefined && inSandbox.length) {
      const checks = await checkClisInSandbox(sandbox, system, inSandbox);
      inSandbox.forEach((h, i) => { rows[h.at] = row(`harness ${h.harness.name}: CLI`, checks[i]!); });
    }
    if (!options.skipEngine) await resolveSlot(kernel, 'engine', config.engine, rows);
    await resolveSlot(kernel, 'trainer', config.trainer, rows);
    await resolveSlot(kernel, 'algorithm', config.algorithm, rows);
    await resolveSlot(kernel, 'policyLoss', config.policyLoss, rows);
    for (const slot of config.tasks) await resolveSlot(kernel, 'taskSuite', slot, rows);
    for (const slot of config.reporters) await resolveSlot(kernel, 'reporter', slot, rows);
  } finally {
    await kernel.dispose();
  }
  return rows;
}
