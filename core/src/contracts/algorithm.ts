import type { AdvantageInput, AdvantageResult } from './tree';

/**
 * An advantage estimator, registered with `api.provide.algorithm` and selected by the config's
 * `algorithm` slot. The registry is the only dispatch path: built-in GRPO and PPO are chosen
 * exactly like a third-party algorithm.
 */
export interface Algorithm {
  readonly name: string;
  /** Whether it needs value estimates from the trainer (PPO does). */
  readonly needsValues: boolean;
  computeAdvantages(input: AdvantageInput): AdvantageResult | Promise<AdvantageResult>;
}
