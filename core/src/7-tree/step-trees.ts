import type { CallSummary, ModelCallRecord } from '../contracts/records';
import type { RolloutTree } from '../contracts/tree';
import type { Kernel } from '../kernel/kernel';
import { buildTree, type RolloutInfo } from './builder';
import { buildTreeFromStream } from './build-stream';

/**
 * A rollout's calls as the step gets them: the whole list a caller already holds, or the calls'
 * heads with a stream of the full records (read from the store one at a time, so a rollout's
 * prompts are never all in memory at once).
 */
export type StepCalls =
  | { records: readonly ModelCallRecord[] }
  | { calls: Iterable<CallSummary>; stream: () => AsyncIterable<ModelCallRecord> };

/** One rollout of a step: its calls and what its tree says of it. */
export type StepRollout = StepCalls & { info: RolloutInfo };

/**
 * Trees of a step's rollouts: built from their calls, then passed through the `onTreeBuilt`
 * waterfall, whose first tap is core's built-in filters (the config's `tree` section). Built one rollout
 * after another: a streamed rollout's records are read while its tree is built, and let go after.
 */
export async function buildStepTrees(kernel: Kernel, rollouts: readonly StepRollout[], messageEndId: number): Promise<RolloutTree[]> {
  const trees: RolloutTree[] = [];
  for (const r of rollouts) {
    const built = 'records' in r
      ? buildTree(r.records, r.info, { messageEndId })
      : await buildTreeFromStream(r.calls, r.stream(), r.info, { messageEndId });
    trees.push(await kernel.hooks.onTreeBuilt.promise(built));
  }
  return trees;
}
