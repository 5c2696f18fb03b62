import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { wholeNumberFlag } from '../flags';
import { ClawGymError, ErrorCodes } from '../../errors';
import { evalRollout, evaluate, type EvalRollout } from '../../eval/evaluate';
import { oracleEngine } from '../../eval/oracle';
import { createKernel, provider, slotOptions, trainerOptions, type SlotRef } from '../../kernel/create';
import { buildTree } from '../../tree/builder';
import { applyFilters } from '../../tree/filters';
import { saveCheckpoint } from '../../train/checkpoint';
import { Rng } from '../../util/rng';
import type { RolloutTree } from '../../contracts/tree';
import type { Task } from '../../contracts/task';
import type { ModelCallRecord } from '../../contracts/records';
import { CallStore } from '../../rollout/call-store';

export interface SftOptions {
  config?: string;
  demos?: string;
  steps?: string;
  batch?: string;
  out?: string;
  name?: string;
  saveEvery?: string;
  lr?: string;
  fresh?: boolean;
  stopAfter?: string;
  reuseDemos?: boolean;
}

/**
 * `clawgym sft`: the supervised cold start. The scripted oracle plays train-split tasks through
 * the configured harnesses and the proxy (real rollouts, real records); the trees of the
 * rollouts that passed are the demonstrations; the configured trainer takes supervised steps on
 * them (every generated token weight 1, shared prefixes once) and saves a checkpoint.
 */
export async function sft(opts: SftOptions, io: { out: (s: string) => void; err: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const kernel = await createKernel(config);
  const name = opts.name ?? 'sft';
  const runDir = resolve(config.rootDir, config.run.outDir, name);
  const lr = Number(opts.lr ?? 1e-3);
  if (!(lr > 0)) throw new ClawGymError(ErrorCodes.USAGE, `--lr must be a positive number, got ${JSON.stringify(opts.lr)}`);
  const demos = wholeNumberFlag('--demos', opts.demos ?? 64, 1);
  const steps = wholeNumberFlag('--steps', opts.steps ?? 200, 1);
  const batchSize = wholeNumberFlag('--batch', opts.batch ?? 8, 1);
  const saveEvery = wholeNumberFlag('--save-every', opts.saveEvery ?? 100, 0);
  const out = resolve(io.cwd, opts.out ?? `${runDir}/checkpoint`);
  // --stop-after: end early on the --steps schedule (how a cold start is calibrated: stop where
  // held-out Pass@1 leaves room for RL); the checkpoint is what step --stop-after produced.
  const stopAfter = Number(opts.stopAfter ?? steps);
  if (!Number.isInteger(stopAfter) || stopAfter < 1 || stopAfter > steps) throw new ClawGymError(ErrorCodes.USAGE, `--stop-after must be a whole number from 1 to --steps (${steps}), got ${JSON.stringify(String(opts.stopAfter))}`);
  // --fresh: start from random weights even when the config names a checkpoint (to remake it).
  const policyOptions = (o: Record<string, unknown>) => {
    if (!opts.fresh) return o;
    const { checkpoint: _dropped, ...rest } = o;
    return rest;
  };
  const tasks: Task[] = [];
  for (const slot of config.tasks as SlotRef[]) tasks.push(...await (await provider(kernel, 'taskSuite', slot)).tasks('train', { seed: config.run.seed, limit: demos, options: slotOptions(slot) }));
  const harnesses = await Promise.all((config.harnesses as SlotRef[]).map(async (slot) => ({ harness: await provider(kernel, 'harness', slot), options: slotOptions(slot) })));
  const trainer = await (await provider(kernel, 'trainer', config.trainer)).create(policyOptions(trainerOptions(config)), { runDir, seed: config.run.seed, rootDir: config.rootDir });
  // Demonstrations are encoded with the policy's own tokenizer and template.
  const engine = await (await provider(kernel, 'engine', config.engine)).create(policyOptions(slotOptions(config.engine)), { runDir, seed: config.run.seed, rootDir: config.rootDir });
  if (!trainer.supervisedStep) throw new ClawGymError(ErrorCodes.PROVIDER_MISSING, `trainer "${trainer.name}" has no supervised step`);
  const demosDir = `${runDir}/demos`;
  let played: EvalRollout[];
  let recordsOf: (r: EvalRollout) => Promise<ModelCallRecord[]>;
  if (opts.reuseDemos) {
    // The demonstrations a previous sft of this config played (to try other steps or lr
    // without playing them again): the same tasks through the same harnesses, or an error.
    const file = `${demosDir}/eval.json`;
    const text = await readFile(file, 'utf8').catch(() => { throw new ClawGymError(ErrorCodes.USAGE, `--reuse-demos: no demonstrations at ${file}; run sft once without it to play them`); });
    played = (JSON.parse(text) as { rollouts: EvalRollout[] }).rollouts;
    const want = new Set(tasks.flatMap((t) => harnesses.map((h) => `${t.id}\u0000${h.harness.name}`)));
    const have = new Set(played.map((r) => `${r.taskId}\u0000${r.harness}`));
    if (want.size !== have.size || [...want].some((k) => !have.has(k))) {
      throw new ClawGymError(ErrorCodes.USAGE, `--reuse-demos: the demonstrations at ${demosDir} were played for other tasks or harnesses (${have.size} task x harness pairs there, ${want.size} asked for with --demos ${demos}); drop --reuse-demos to play them again`);
    }
    const store = new CallStore(`${demosDir}/calls`);
    recordsOf = (r) => store.read(r.sessionId ?? r.rolloutId); // eval.json files older than sessionId lack it
    io.err(`reusing ${played.length} played rollouts from ${demosDir}\n`);
  } else {
    io.err(`playing ${tasks.length} train tasks x ${harnesses.length} harness(es) with the oracle to make demonstrations…\n`);
    const reports = (await evaluate({
      runId: name, runDir: demosDir, tasks, harnesses, engine: (taskOf) => oracleEngine(taskOf, engine), sandboxes: await provider(kernel, 'sandbox', config.sandbox),
      k: 1, maxTokens: 1 << 20, concurrency: config.run.concurrency, timeoutMs: config.run.rolloutTimeoutMs, infraRetries: config.run.infraRetries, kernel,
    })).reports;
    const byId = new Map(reports.map((r) => [r.rolloutId, r.records]));
    played = reports.map(evalRollout);
    recordsOf = async (r) => byId.get(r.rolloutId) ?? [];
  }
  const messageEndId = engine.chatTemplate.stopIds[0]!;
  const categoryOf = new Map(tasks.map((t) => [t.id, t.category]));
  const trees: RolloutTree[] = [];
  for (const r of played.filter((x) => x.pass)) {
    trees.push(applyFilters(buildTree(await recordsOf(r), { rolloutId: r.sessionId ?? r.rolloutId, taskId: r.taskId, category: categoryOf.get(r.taskId) ?? '', harness: r.harness, outcome: r.outcome, reward: r.reward }, { messageEndId }), config.tree));
  }
  io.err(`${trees.length} demonstrations (of ${played.length} rollouts); ${steps} supervised steps${stopAfter < steps ? ` (stopping after ${stopAfter})` : ''}, batches of ${batchSize}\n`);
  const rng = new Rng(config.run.seed);
  for (let s = 1; s <= stopAfter; s++) {
    const batch = Array.from({ length: Math.min(batchSize, trees.length) }, () => trees[rng.int(0, trees.length - 1)]!);
    // --lr with cosine decay to a tenth over the run (the trainer's warm-up still applies); the
    // config's optimiser lr stays the RL run's.
    const stepLr = lr * (0.1 + 0.45 * (1 + Math.cos(Math.PI * (s - 1) / steps)));
    const { loss, tokens } = await trainer.supervisedStep(batch, { lr: stepLr });
    if (s === 1 || s % 10 === 0 || s === stopAfter) io.out(`step ${s}/${steps}  loss ${loss.toFixed(4)}  tokens ${tokens}\n`);
    // Long cold starts save as they go (atomically), so a crash loses at most `saveEvery` steps.
    if (saveEvery > 0 && s % saveEvery === 0 && s !== stopAfter) await saveCheckpoint(trainer, out);
  }
  await saveCheckpoint(trainer, out);
  await kernel.dispose();
  io.out(`checkpoint: ${out}\n`);
}
