import type { ModelCallRecord } from '../contracts/records';
import type { AdvantageResult, RolloutTree } from '../contracts/tree';
import { ClawGymError, ErrorCodes } from '../errors';
import { provider, slotName, slotOptions } from '../kernel/create';
import type { Kernel } from '../kernel/kernel';
import { buildTree, type RolloutInfo } from './builder';
import { applyFilters } from './filters';

/**
 * Trees of a step's rollouts: built from their calls, passed through the built-in filters
 * (the config's `tree` section), then through the `onTreeBuilt` waterfall.
 */
export async function buildStepTrees(
  kernel: Kernel,
  rollouts: readonly { records: readonly ModelCallRecord[]; info: RolloutInfo }[],
  messageEndId: number,
): Promise<RolloutTree[]> {
  const trees: RolloutTree[] = [];
  for (const r of rollouts) {
    const tree = applyFilters(buildTree(r.records, r.info, { messageEndId }), kernel.config.tree);
    trees.push(await kernel.hooks.onTreeBuilt.promise(tree));
  }
  return trees;
}

/**
 * Advantages of a step, from whichever algorithm the config selects — through the
 * `computeAdvantage` hook, the only dispatch path, for built-in and third-party algorithms alike.
 */
export async function computeStepAdvantages(
  kernel: Kernel,
  trees: readonly RolloutTree[],
  values?: ReadonlyMap<string, ReadonlyMap<number, Float32Array>>,
): Promise<AdvantageResult> {
  const slot = kernel.config.algorithm;
  const name = slotName(slot);
  const options = slotOptions(slot);
  const algorithm = await provider(kernel, 'algorithm', slot);
  if (algorithm.needsValues && !values) {
    throw new ClawGymError(ErrorCodes.PROVIDER_MISSING, `algorithm "${name}" needs value estimates, but none were given`, {
      hint: 'Use a trainer with a value head, or an algorithm without one (grpo).',
    });
  }
  const result = await kernel.hooks.computeAdvantage.promise({ algorithm: name, options, trees, values });
  if (!result) {
    throw new ClawGymError(ErrorCodes.PROVIDER_MISSING, `no plugin answered computeAdvantage for algorithm "${name}"`, {
      hint: 'An algorithm plugin must tap computeAdvantage and answer for its own name (tapAlgorithm does both).',
    });
  }
  return result;
}
