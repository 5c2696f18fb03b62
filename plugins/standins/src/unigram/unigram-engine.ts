import { ClawGymError, ErrorCodes, ScriptedEngine, type PublishedWeights } from '@clawgym/core';
import { loadUnigramWeights, logSumExp } from './unigram-weights';

/**
 * Core's scripted engine, each reply token's logprob read from a unigram policy over the
 * tokenizer's vocabulary (uniform until weights load): the policy `UnigramTrainer` trains, so the
 * trainer reads the same logprobs at the same weights, as a real engine and its trainer would.
 * The engine behind `clawgym engine serve --tokenizer` and `trainer serve --tokenizer`'s sampler.
 */
export class UnigramScriptedEngine extends ScriptedEngine {
  private unigram!: { logits: Float32Array; lse: number };

  constructor(...args: ConstructorParameters<typeof ScriptedEngine>) {
    super(...args);
    const logits = new Float32Array(this.tokenizer.vocabSize);
    this.unigram = { logits, lse: logSumExp(logits) };
  }

  /** Load the unigram weights the trainer published (full weights only: a unigram has no adapters). */
  override async syncWeights(weights?: PublishedWeights): Promise<void> {
    if (!weights) return;
    if (weights.kind === 'lora') throw new ClawGymError(ErrorCodes.ENGINE_FAILED, `${weights.path} is a LoRA adapter; the scripted engine's unigram policy loads full weights only`, { hint: 'Train with loraRank 0 (full weights).' });
    const { logits } = await loadUnigramWeights(weights.path, this.tokenizer.vocabSize);
    this.unigram = { logits, lse: logSumExp(logits) };
    this.version = weights.version;
  }

  protected override logprob(id: number): number {
    return this.unigram.logits[id]! - this.unigram.lse;
  }
}
