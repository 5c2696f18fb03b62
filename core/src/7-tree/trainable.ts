import type { RolloutTree, TreeNode } from '../contracts/tree';

/** Ids of nodes under the tree's auxiliary roots (subagents, side calls, compaction). */
export function auxiliaryNodeIds(tree: RolloutTree): Set<number> {
  const aux = new Set(tree.auxiliaryRoots);
  // Nodes are stored parents-first, so one forward pass sees every ancestor before its children.
  for (const node of tree.nodes) if (node.parent >= 0 && aux.has(node.parent)) aux.add(node.id);
  return aux;
}

/** Whether a rollout takes part in training at all. */
export function isTrainable(tree: RolloutTree): boolean {
  return !tree.dropped && (tree.outcome === 'ok' || tree.outcome === 'harness-error');
}

/**
 * Generated nodes that enter the loss: those no filter removed (the auxiliary filter marks
 * auxiliary trees' nodes, unless `tree.excludeAuxiliary` is turned off).
 */
export function trainableNodes(tree: RolloutTree): TreeNode[] {
  if (!isTrainable(tree)) return [];
  return tree.nodes.filter((n) => n.kind === 'generated' && !n.removedBy);
}
