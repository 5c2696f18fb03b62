import type { ResolvedConfig } from '../config/schema';
import type { WeightsRouteProblem } from '../contracts/trainer';
import { ClawGymError, ErrorCodes } from '../errors';
import { provider, slotName, slotOptions, trainerOptions, type SlotRef } from './create';
import type { Kernel } from './kernel';

/**
 * Whether the config's trainer publishes weights its engine can load (the trainer's own
 * `checkEngine`); undefined when it does, or when the trainer cannot tell.
 */
export async function weightsRouteProblem(kernel: Kernel, config: Pick<ResolvedConfig, 'engine' | 'trainer'>, engine: SlotRef = config.engine): Promise<WeightsRouteProblem | undefined> {
  const trainer = await provider(kernel, 'trainer', config.trainer);
  return trainer.checkEngine?.(trainerOptions(config), { name: slotName(engine), options: slotOptions(engine) });
}

/** The same, as the error a run stops with before it starts anything. */
export async function assertWeightsRoute(kernel: Kernel, config: Pick<ResolvedConfig, 'engine' | 'trainer'>, engine: SlotRef = config.engine): Promise<void> {
  const problem = await weightsRouteProblem(kernel, config, engine);
  if (problem) throw new ClawGymError(ErrorCodes.WEIGHTS_UNREACHABLE, `trainer "${slotName(config.trainer)}" and engine "${slotName(engine)}": ${problem.message}`, { hint: problem.hint });
}
