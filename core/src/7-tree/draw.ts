import type { RolloutTree } from '../contracts/tree';
import { auxiliaryNodeIds } from './trainable';

/**
 * Draw a rollout tree as text: one line per node with its kind, token count and call, and
 * what removed it from the loss and why; the filter counts and any drop reason at the top.
 */
export function drawTree(tree: RolloutTree, decode?: (ids: ArrayLike<number>) => string): string {
  const kids: number[][] = tree.nodes.map(() => []);
  const roots: number[] = [];
  for (const n of tree.nodes) (n.parent >= 0 ? kids[n.parent]! : roots).push(n.id);
  const aux = auxiliaryNodeIds(tree);
  const generated = tree.nodes.filter((n) => n.kind === 'generated');
  const lines = [
    `rollout ${tree.rolloutId}  task ${tree.taskId} (${tree.category})  harness ${tree.harness}  outcome ${tree.outcome}  reward ${tree.reward}`,
    `${tree.nodes.length} nodes, ${tree.nodes.reduce((s, n) => s + n.tokens.length, 0)} tokens (${generated.reduce((s, n) => s + n.tokens.length, 0)} generated), ${tree.auxiliaryRoots.length} auxiliary tree(s), from ${tree.calls ?? '?'} calls`,
    `filters: ${Object.entries(tree.filterCounts).map(([k, v]) => `${k}=${v}`).join(' ') || 'none'}${tree.dropped ? `\nDROPPED: ${tree.dropped}` : ''}`,
  ];
  const preview = (ids: ArrayLike<number>) => {
    if (!decode) return '';
    // The first ids only: a node of a long session holds millions.
    const text = decode(Array.from({ length: Math.min(48, ids.length) }, (_, i) => ids[i]!)).replace(/\s+/g, ' ');
    return `  "${text}${ids.length > 48 ? '…' : ''}"`;
  };
  const walk = (id: number, prefix: string, last: boolean) => {
    const n = tree.nodes[id]!;
    const tag = n.kind === 'generated' ? 'gen' : 'ins';
    const status = n.removedBy ? `  ✗ ${n.removedBy}` : n.kind === 'generated' && !aux.has(id) && !tree.dropped ? '  ✓ trained' : '';
    lines.push(`${prefix}${last ? '└─' : '├─'} [${tag} ${n.tokens.length}] call ${n.callIndex}${aux.has(id) && n.parent < 0 ? ' (auxiliary tree)' : ''}${status}${preview(n.tokens)}`);
    kids[id]!.forEach((c, i) => walk(c, `${prefix}${last ? '   ' : '│  '}`, i === kids[id]!.length - 1));
  };
  roots.forEach((r, i) => walk(r, '', i === roots.length - 1));
  return lines.join('\n');
}
