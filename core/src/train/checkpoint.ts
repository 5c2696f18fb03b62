import { rename, rm } from 'node:fs/promises';
import type { Trainer } from '../contracts/trainer';

/**
 * Save a trainer's checkpoint to `dir` so a kill at any moment leaves either the previous
 * checkpoint or the new one, never half of one: write beside it, then swap.
 */
export async function saveCheckpoint(trainer: Pick<Trainer, 'save'>, dir: string): Promise<void> {
  await trainer.save(`${dir}.tmp`);
  await rm(dir, { recursive: true, force: true });
  await rename(`${dir}.tmp`, dir);
}
