import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallHead, ModelCallRecord, RecordStore } from '../contracts/records';
import type { ResolvedConfig } from '../config/schema';
import { ClawGymError, ErrorCodes } from '../errors';
import { evalRollout, evaluate, type EvalRollout } from '../eval/evaluate';
import { oracleEngine } from '../eval/oracle';
import { Tokens } from './tokens';
import { saveCheckpoint } from '../9-train/checkpoint';
import { buildStepTrees, type StepCalls } from '../7-tree/step-trees';
import { Rng } from '../util/rng';
import { composeRun } from './compose';

export interface SftRunOptions {
  config: ResolvedConfig;
  name: string;
  runDir: string;
  /** Train tasks to play per suite. */
  demos: number;
  steps: number;
  batchSize: number;
  /** Save every n steps as well as at the end (0: only at the end). */
  saveEvery: number;
  /** Peak learning rate, decayed along a cosine to a tenth. */
  lr: number;
  /** End after this step of the `steps` schedule. */
  stopAfter: number;
  /** Start from random weights even when the config names a checkpoint. */
  fresh?: boolean;
  /** Train on the demonstrations a previous sft of this name played. */
  reuseDemos?: boolean;
  /** Checkpoint folder. */
  out: string;
  /** Progress lines (stderr) and step lines (stdout). */
  log: (s: string) => void;
  print: (s: string) => void;
}

/**
 * The supervised cold start, composed like a run (`composeRun` for `sft`): the scripted oracle
 * plays train-split tasks through the configured harnesses and the proxy (real rollouts, real
 * records, the kernel's hooks); the trees of the rollouts that passed, built by the same tree
 * pipeline as an RL step (built-in filters, then `onTreeBuilt`), are the demonstrations; the
 * configured trainer takes supervised steps on them (every generated token weight 1, shared
 * prefixes once) and saves a checkpoint.
 */
export async function sftRun(o: SftRunOptions): Promise<void> {
  const { config } = o;
  // --fresh: start from random weights even when the config names a checkpoint (to remake it).
  const policyOptions = (x: Record<string, unknown>) => {
    if (!o.fresh) return x;
    const { checkpoint: _dropped, ...rest } = x;
    return rest;
  };
  const s = await composeRun({ config, purpose: 'sft', name: o.name, runDir: o.runDir, taskLimits: { train: o.demos }, policyOptions });
  try {
    const { kernel, harnesses } = s;
    const tasks = s.tasks.train;
    const trainer = s.trainer!;
    // Demonstrations are encoded with the policy's own tokenizer and template.
    const engine = s.engine!;
    if (!trainer.supervisedStep) throw new ClawGymError(ErrorCodes.TRAINER_UNSUPPORTED, `trainer "${trainer.name}" has no supervised step`, { hint: 'Use a trainer with supervisedStep (embedded) for sft.' });
    const demosDir = join(o.runDir, 'demos');
    const demos = s.scope(demosDir, o.name);
    const store = demos.resolve(Tokens.CallStore);
    let played: EvalRollout[];
    if (o.reuseDemos) {
      // The demonstrations a previous sft of this config played (to try other steps or lr
      // without playing them again): the same tasks through the same harnesses, or an error.
      const file = join(demosDir, 'eval.json');
      const text = await readFile(file, 'utf8').catch(() => { throw new ClawGymError(ErrorCodes.USAGE, `--reuse-demos: no demonstrations at ${file}; run sft once without it to play them`); });
      played = (JSON.parse(text) as { rollouts: EvalRollout[] }).rollouts;
      const want = new Set(tasks.flatMap((t) => harnesses.map((h) => `${t.id}\u0000${h.harness.name}`)));
      const have = new Set(played.map((r) => `${r.taskId}\u0000${r.harness}`));
      if (want.size !== have.size || [...want].some((k) => !have.has(k))) {
        throw new ClawGymError(ErrorCodes.USAGE, `--reuse-demos: the demonstrations at ${demosDir} were played for other tasks or harnesses (${have.size} task x harness pairs there, ${want.size} asked for with --demos ${o.demos}); drop --reuse-demos to play them again`);
      }
      o.log(`reusing ${played.length} played rollouts from ${demosDir}\n`);
    } else {
      o.log(`playing ${tasks.length} train tasks x ${harnesses.length} harness(es) with the oracle to make demonstrations…\n`);
      const reports = (await evaluate({
        scope: demos, tasks, harnesses, engine: (taskOf) => oracleEngine(taskOf, engine), k: 1, maxTokens: 1 << 20,
      })).reports;
      played = reports.map(evalRollout);
    }
    const categoryOf = new Map(tasks.map((t) => [t.id, t.category]));
    const passed = played.filter((x) => x.pass);
    // Each demonstration's records are streamed from the store while its tree is built (played
    // now or reused, they are in the same store): never every rollout's prompts at once.
    const trees = await buildStepTrees(kernel, await Promise.all(passed.map(async (r) => ({
      ...await streamed(store, r.sessionId ?? r.rolloutId), // eval.json files older than sessionId lack it
      info: { rolloutId: r.sessionId ?? r.rolloutId, taskId: r.taskId, category: categoryOf.get(r.taskId) ?? '', harness: r.harness, outcome: r.outcome, reward: r.reward },
    }))), engine.chatTemplate.stopIds[0]!);
    const { steps, stopAfter } = o;
    o.log(`${trees.length} demonstrations (of ${played.length} rollouts); ${steps} supervised steps${stopAfter < steps ? ` (stopping after ${stopAfter})` : ''}, batches of ${o.batchSize}\n`);
    const rng = new Rng(config.run.seed);
    for (let step = 1; step <= stopAfter; step++) {
      const batch = Array.from({ length: Math.min(o.batchSize, trees.length) }, () => trees[rng.int(0, trees.length - 1)]!);
      // --lr with cosine decay to a tenth over the run (the trainer's warm-up still applies); the
      // config's optimiser lr stays the RL run's.
      const stepLr = o.lr * (0.1 + 0.45 * (1 + Math.cos(Math.PI * (step - 1) / steps)));
      const { loss, tokens } = await trainer.supervisedStep(batch, { lr: stepLr });
      if (step === 1 || step % 10 === 0 || step === stopAfter) o.print(`step ${step}/${steps}  loss ${loss.toFixed(4)}  tokens ${tokens}\n`);
      // Long cold starts save as they go (atomically), so a crash loses at most `saveEvery` steps.
      if (o.saveEvery > 0 && step % o.saveEvery === 0 && step !== stopAfter) await saveCheckpoint(trainer, o.out);
    }
    await saveCheckpoint(trainer, o.out);
    o.print(`checkpoint: ${o.out}\n`);
  } finally {
    await s.dispose();
  }
}

/** A rollout's heads (one pass, no prompt ids) and a stream of its full records, from the store. */
async function streamed(store: RecordStore, rolloutId: string): Promise<StepCalls> {
  // A store of a plugin's without a streamed reader is read whole, as it was before.
  if (!store.heads || !store.stream) return { records: await store.read(rolloutId) };
  const calls: CallHead[] = [];
  for await (const h of store.heads(rolloutId)) calls.push(h);
  return { calls, stream: () => store.stream!(rolloutId) };
}
