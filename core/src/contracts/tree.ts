import type { TokenIds } from './engine';

/** A run of tokens in a rollout tree. */
export interface TreeNode {
  /** Index of this node in `RolloutTree.nodes`. */
  id: number;
  /** Index of the parent node, or -1 for a root. */
  parent: number;
  /** `generated` tokens are trainable and carry rollout logprobs; `inserted` never are. */
  kind: 'inserted' | 'generated';
  tokens: TokenIds;
  /** Rollout (engine) log-probabilities, for generated nodes. */
  logprobs?: Float32Array;
  /** The call that contributed this run. */
  callIndex: number;
  /**
   * For generated runs: the distribution the engine sampled them from (the call record's
   * temperature and top-p), which a trainer scores them under. Unset: temperature 1, top-p 1.
   */
  sampling?: { temperature: number; topP: number };
  /**
   * For generated runs: the policy version that served the call (its record's). In an
   * asynchronous run a weight update can land between two calls of one rollout, so one tree can
   * hold tokens of several versions; each token's rollout logprob is that version's.
   */
  policyVersion?: number;
  /** Set when a filter removed this node from the loss, with the filter's reason. */
  removedBy?: string;
}

/** How a rollout ended. Only `ok` and `harness-error` rollouts are scored and trained. */
export type RolloutOutcome = 'ok' | 'harness-error' | 'timeout' | 'infra-error';

/**
 * What an infrastructure failure was, for the fault accounting: the sandbox, the task's setup,
 * a harness that never got to its first model call (`harness-start`: it could not be started,
 * or made no call within the start-up limit), the engine or the proxy, a request the proxy
 * refused, missing records, the workspace sync, the verifier, a cancel, or the runner itself.
 */
export type InfraClass = 'sandbox' | 'task-setup' | 'harness-start' | 'engine' | 'refused' | 'records' | 'sync' | 'verifier' | 'cancelled' | 'runner';

/**
 * The prefix tree rebuilt from one rollout's calls, with its reward. Flows through the
 * `onTreeBuilt` waterfall, where plugins may filter or reshape it.
 */
export interface RolloutTree {
  rolloutId: string;
  taskId: string;
  category: string;
  harness: string;
  outcome: RolloutOutcome;
  reward: number;
  /** Main tree nodes first, then auxiliary trees; roots have `parent: -1`. */
  nodes: TreeNode[];
  /** Roots of auxiliary trees (subagents, side calls, compaction): excluded from the loss. */
  auxiliaryRoots: number[];
  /** Set when the whole rollout is dropped from training, with the reason. */
  dropped?: string;
  /** Count of what each filter removed, by filter name (generated tokens, or rollouts for drops). */
  filterCounts: Record<string, number>;
  /** Number of model calls the tree was built from, and of those excluded (failed or aborted). */
  calls?: number;
}

/** What an algorithm's `computeAdvantages` receives (and `computeAdvantage` taps, beside the result). */
export interface AdvantageInput {
  /** Name of the algorithm the config selects. */
  algorithm: string;
  options: Record<string, unknown>;
  trees: readonly RolloutTree[];
  /** Value estimates per tree and generated node, when the trainer has a value head. */
  values?: ReadonlyMap<string, ReadonlyMap<number, Float32Array>>;
}

/** Per-token advantages, keyed by rollout id then generated node id. */
export interface AdvantageResult {
  algorithm: string;
  advantages: Map<string, Map<number, Float32Array>>;
  /** Value targets for PPO's value loss, same keys as `advantages`. */
  valueTargets?: Map<string, Map<number, Float32Array>>;
  metrics: Record<string, number>;
}
