import type { Trainer } from '../contracts/trainer';
import type { AdvantageInput, AdvantageResult, RolloutTree } from '../contracts/tree';
import { ClawGymError, ErrorCodes } from '../errors';
import { provider, slotName, slotOptions } from '../kernel/create';
import type { Kernel } from '../kernel/kernel';
import { isTrainable } from '../7-tree/trainable';

/**
 * Advantages of a step from the algorithm the config selects. The registry is the only
 * dispatch path (STYLE.md rule 11): the algorithm is looked up by the config's name (its
 * package loaded on demand) and called, built-in GRPO and PPO exactly like a third-party one.
 * The `computeAdvantage` waterfall then lets plugins reshape the result (clipping, shaping).
 * Value estimates come from `trainer.values` when the algorithm needs them.
 */
export async function computeStepAdvantages(
  kernel: Kernel,
  trees: readonly RolloutTree[],
  trainer?: Pick<Trainer, 'name' | 'values'>,
): Promise<AdvantageResult> {
  const slot = kernel.config.algorithm;
  const name = slotName(slot);
  const algorithm = await provider(kernel, 'algorithm', slot);
  let values: AdvantageInput['values'];
  if (algorithm.needsValues) {
    if (!trainer?.values) {
      throw new ClawGymError(ErrorCodes.ALGORITHM_NEEDS_VALUES, `algorithm "${name}" needs value estimates, but trainer "${trainer?.name ?? '(none)'}" has no value head`, {
        hint: 'Use a trainer with a value head (embedded), or an algorithm without one (grpo).',
      });
    }
    values = await trainer.values(trees.filter(isTrainable));
  }
  const input: AdvantageInput = { algorithm: name, options: slotOptions(slot), trees, values };
  const result = await algorithm.computeAdvantages(input);
  return kernel.hooks.computeAdvantage.promise(result, input);
}
