import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Trainer } from '../contracts/trainer';

/** The run step a checkpoint holds, beside the trainer's own files. */
const STEP_FILE = 'clawgym-step.json';

/**
 * Save a trainer's checkpoint to `dir` so a kill at any moment leaves either the previous
 * checkpoint or the new one, never half of one: write beside, then swap. With `step`, the
 * checkpoint records the run step it holds, so a kill after the swap and before the run's state
 * is written does not train that step again on resume ({@link checkpointStep}).
 */
export async function saveCheckpoint(trainer: Pick<Trainer, 'save'>, dir: string, step?: number): Promise<void> {
  await trainer.save(`${dir}.tmp`);
  if (step !== undefined) await writeFile(join(`${dir}.tmp`, STEP_FILE), `${JSON.stringify({ step })}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(`${dir}.tmp`, dir);
}

/** The run step the checkpoint in `dir` holds, when it recorded one. */
export async function checkpointStep(dir: string): Promise<number | undefined> {
  const text = await readFile(join(dir, STEP_FILE), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as { step: number }).step;
}
