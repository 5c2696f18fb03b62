import type { ModelCallRecord } from '../contracts/records';
import type { RolloutTree } from '../contracts/tree';
import { firstMainCall, TreeBuilder, type BuildOptions, type RolloutInfo } from './builder';

/** What the streamed build reads first: each call's index, role and finish, in any order. */
export type CallSummary = Pick<ModelCallRecord, 'callIndex' | 'role' | 'finishReason'>;

/**
 * A rollout's prefix tree from a stream of its records, one at a time: the same tree as
 * {@link buildTree} on the whole list, in the memory of the tree and the record being added
 * (plus records that arrive before an earlier call: a file is in the order calls finished,
 * which concurrent calls may swap). `calls` (a first, cheap pass: heads, no ids) says which call
 * decides the main tree and the order to add them in. A record's array outlives it only where
 * the tree uses most of it (the chains calls that extend one another are read into).
 */
export async function buildTreeFromStream(
  calls: Iterable<CallSummary>, records: AsyncIterable<ModelCallRecord>, info: RolloutInfo, options: BuildOptions,
): Promise<RolloutTree> {
  const summaries = [...calls];
  const order = summaries.map((c) => c.callIndex).sort((a, b) => a - b);
  const builder = new TreeBuilder({ ...options, firstMain: firstMainCall(summaries), copyRuns: true });
  const waiting = new Map<number, ModelCallRecord>();
  let next = 0;
  const drain = () => {
    for (let r = waiting.get(order[next]!); r; r = waiting.get(order[next]!)) {
      waiting.delete(order[next]!);
      builder.add(r);
      next++;
    }
  };
  for await (const r of records) {
    waiting.set(r.callIndex, r);
    drain();
  }
  // Records the summaries did not list (a stream longer than its heads): added in call order.
  for (const i of [...waiting.keys()].sort((a, b) => a - b)) builder.add(waiting.get(i)!);
  return builder.finish(info);
}
