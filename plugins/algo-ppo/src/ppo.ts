import { ClawGymError, ErrorCodes, parseWithSchema, trainableNodes, z, type AdvantageInput, type AdvantageResult, type Algorithm } from '@clawgym/core';

/** Options of the `ppo` algorithm slot. */
export const PpoOptions = z.strictObject({});

/**
 * Simplified PPO as in the paper: a value head gives `V(s_t)` for every generated token;
 * with no discount the return of every token is the rollout's reward `R`, so
 * `A_t = R − V(s_t)` and the value target is `R`. Branches of a rollout are independent
 * because each token's value is its own.
 */
export function computePpo(input: AdvantageInput): AdvantageResult {
  parseWithSchema(PpoOptions, input.options, 'options of algorithm "ppo"');
  if (!input.values) {
    throw new ClawGymError(ErrorCodes.ALGORITHM_NEEDS_VALUES, 'ppo needs value estimates V(s_t), but the trainer gave none', {
      hint: 'Use a trainer with a value head (the embedded trainer has one), or choose algorithm "grpo".',
    });
  }
  const advantages = new Map<string, Map<number, Float32Array>>();
  const valueTargets = new Map<string, Map<number, Float32Array>>();
  let tokens = 0;
  let sumV = 0;
  for (const tree of input.trees) {
    const nodes = trainableNodes(tree);
    if (nodes.length === 0) continue;
    const values = input.values.get(tree.rolloutId);
    const adv = new Map<number, Float32Array>();
    const tgt = new Map<number, Float32Array>();
    for (const node of nodes) {
      const v = values?.get(node.id);
      if (!v || v.length !== node.tokens.length) {
        throw new ClawGymError(ErrorCodes.ALGORITHM_NEEDS_VALUES,
          `ppo: no value estimate for rollout ${tree.rolloutId} node ${node.id} (${node.tokens.length} tokens)`);
      }
      adv.set(node.id, v.map((x) => tree.reward - x));
      tgt.set(node.id, new Float32Array(v.length).fill(tree.reward));
      tokens += v.length;
      for (const x of v) sumV += x;
    }
    advantages.set(tree.rolloutId, adv);
    valueTargets.set(tree.rolloutId, tgt);
  }
  return { algorithm: 'ppo', advantages, valueTargets, metrics: { tokens, meanValue: tokens ? sumV / tokens : 0 } };
}

export const ppoAlgorithm: Algorithm = { name: 'ppo', needsValues: true, computeAdvantages: computePpo };
