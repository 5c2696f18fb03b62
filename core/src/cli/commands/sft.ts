import { resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { wholeNumberFlag } from '../flags';
import { ClawGymError, ErrorCodes } from '../../errors';
import { sftRun } from '../../run/sft';
import { preflight } from '../../doctor/preflight';
import { lockRunDir } from '../../run/lock';

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

/** `clawgym sft`: the supervised cold start (see `run/sft.ts`); this reads and checks the flags. */
export async function sft(opts: SftOptions, io: { out: (s: string) => void; err: (s: string) => void; cwd: string }): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
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
  await preflight(config, 'sft');
  // One process a run folder: a second sft (or a run) of the same name is refused.
  const lock = await lockRunDir(runDir, 'sft', io.err);
  try {
    await sftRun({
      config, name, runDir, demos, steps, batchSize, saveEvery, lr, stopAfter, out,
      fresh: opts.fresh, reuseDemos: opts.reuseDemos, log: io.err, print: io.out,
    });
  } finally {
    await lock.release();
  }
}
