import type { ModelCallRecord } from '../contracts/records';
import type { RolloutTree } from '../contracts/tree';
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
