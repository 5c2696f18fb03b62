import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ResolvedConfig } from '../../config/schema';
import type { LockedHarness, LockedSuite, RunLock } from '../../contracts/lock';
import type { PluginKind } from '../../contracts/plugin';
import type { Task, TaskSuite } from '../../contracts/task';
import { provider, slotName, slotOptions, trainerOptions, type SlotRef } from '../../kernel/create';
import type { Kernel } from '../../kernel/kernel';
import { readFingerprints } from '../../3-harness/fingerprint/watch';
import { hashFiles, hashTree } from '../../util/content-hash';
import { stableJson } from '../../util/stable-json';
import { CORE_VERSION } from '../../version';
import { messageOf } from '../../errors';
import { frozenConfig } from '../frozen-config';
import { lockedCli } from './harness-cli';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The resolved config's hash: its plain data, plugin objects by name, without the folder it sits in. */
export function configHash(config: ResolvedConfig): string {
  const { rootDir: _root, configFile: _file, ...rest } = frozenConfig(config);
  return sha256(stableJson(rest));
}

/** `package@version` of the plugin that registered `name` of this kind. */
function providerOf(kernel: Kernel, kind: PluginKind, name: string): string {
  const origin = kernel.registry.entries(kind).find((e) => e.name === name)?.origin;
  return origin ? `${origin.packageName}${origin.version ? `@${origin.version}` : ''}` : 'unknown';
}

/** A function's hash by its source (a verifier's or a setup's code); a value that is none, by its type. */
const codeHash = (f: unknown) => (typeof f === 'function' ? sha256(Function.prototype.toString.call(f)).slice(0, 16) : typeof f);

/** One task as the lock sees it: everything it is made of, its functions by their code. */
function taskEntry(split: string, t: Task): string {
  const { id, category, instruction, difficulty, timeLimitMs, environment, limits, workspacePath } = t;
  return stableJson({ split, id, category, instruction, difficulty, timeLimitMs, environment, limits, workspacePath,
    oracle: Array.isArray(t.oracle) ? t.oracle : codeHash(t.oracle), setup: codeHash(t.setup), verify: codeHash(t.verify) });
}

/** A suite's entry: a hash over both splits' tasks as the run loads them, and its source files by content. */
async function lockedSuite(kernel: Kernel, config: ResolvedConfig, slot: SlotRef, suite: TaskSuite): Promise<LockedSuite> {
  const options = slotOptions(slot);
  const train = await suite.tasks('train', { seed: config.run.seed, limit: 1000, options });
  const test = await suite.tasks('test', { seed: config.run.seed, limit: config.run.evalTasks, options });
  const h = createHash('sha256');
  for (const t of train) h.update(`${taskEntry('train', t)}\n`);
  for (const t of test) h.update(`${taskEntry('test', t)}\n`);
  const sources: Record<string, string> = {};
  for (const s of suite.sources ?? []) sources[s] = existsSync(s) ? `sha256:${await hashTree(s)}` : 'missing';
  return { provider: providerOf(kernel, 'taskSuite', suite.name), tasks: h.digest('hex'), train: train.length, test: test.length, ...(suite.sources ? { sources } : {}) };
}

/**
 * The engine's and trainer's local files (tokenizer, chat template, checkpoint): each string
 * option naming an existing file or folder, file by file. A folder named by both is hashed once.
 */
async function modelFiles(config: ResolvedConfig): Promise<RunLock['model']> {
  const out: RunLock['model'] = {};
  const seen = new Set<string>();
  for (const [role, options] of [['engine', slotOptions(config.engine)], ['trainer', trainerOptions(config)]] as const) {
    for (const [key, value] of Object.entries(options).sort(([a], [b]) => a.localeCompare(b))) {
      if (typeof value !== 'string' || value === '' || value.includes('\n')) continue;
      const path = resolve(config.rootDir, value);
      if (seen.has(path) || !existsSync(path)) continue;
      seen.add(path);
      out[`${role}.${key}`] = await hashFiles(path);
    }
  }
  return out;
}

/**
 * The run lock of a config (see {@link RunLock}): every provider the config names is resolved in
 * `kernel`, so the packages listed are those the run loads. `runDir` is where a run of the config
 * recorded its harnesses' fingerprints (`fingerprints.json`), when one has.
 */
export async function collectLock(config: ResolvedConfig, kernel: Kernel, o: { runDir?: string } = {}): Promise<RunLock> {
  const fingerprints = o.runDir ? (await readFingerprints(o.runDir)).last : {};
  const harnesses: Record<string, LockedHarness> = {};
  for (const slot of [...config.harnesses, ...config.run.evalHarnesses ?? []]) {
    const harness = await provider(kernel, 'harness', slot);
    if (harnesses[harness.name]) continue;
    const fingerprint = fingerprints[harness.name];
    harnesses[harness.name] = { provider: providerOf(kernel, 'harness', harness.name), ...await lockedCli(harness, slotOptions(slot), config.rootDir), ...(fingerprint ? { fingerprint } : {}) };
  }
  const tasks: Record<string, LockedSuite> = {};
  for (const slot of config.tasks) {
    const suite = await provider(kernel, 'taskSuite', slot);
    tasks[suite.name] = await lockedSuite(kernel, config, slot, suite);
  }
  const sandbox = await provider(kernel, 'sandbox', config.sandbox);
  // An image that cannot be inspected (a daemon down) is locked as such; the run's own check names the cause.
  const identity = await sandbox.identity?.().catch((err: unknown) => ({ ref: `unavailable: ${messageOf(err)}` }));
  // Every other provider the run loads, so its plugin's package is listed.
  await provider(kernel, 'engine', config.engine);
  await provider(kernel, 'trainer', config.trainer);
  await provider(kernel, 'algorithm', config.algorithm);
  await provider(kernel, 'policyLoss', config.policyLoss);
  for (const slot of config.reporters) await provider(kernel, 'reporter', slot);
  const packages: Record<string, string> = { '@clawgym/core': CORE_VERSION };
  for (const origin of kernel.registry.pluginOrigins()) {
    if (origin.packageName === '(config)') packages[`(config) ${origin.plugin}`] = 'in the config file';
    else packages[origin.packageName] = origin.version ?? 'unknown';
  }
  return {
    lockVersion: 1, createdAt: new Date().toISOString(), config: configHash(config),
    packages: Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b))),
    harnesses, model: await modelFiles(config), sandbox: { name: slotName(config.sandbox), provider: providerOf(kernel, 'sandbox', slotName(config.sandbox)), ...identity }, tasks,
  };
}
