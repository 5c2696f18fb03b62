import { eachToken, type GeneratedToken, type TokenStep } from '@clawgym/core';
import { KvDecoder, samplingLogprobs, type SharedPolicy } from '@clawgym/engine-embedded';

/** Every token an engine's call generated, in order. */
export async function collect(steps: AsyncIterable<TokenStep>): Promise<GeneratedToken[]> {
  const out: GeneratedToken[] = [];
  for await (const t of eachToken(steps)) out.push(t);
  return out;
}

/** The policy's logprob of each of `tokens` after `prompt` (teacher-forced), as the engine samples at temperature 1. */
export function scored(policy: SharedPolicy, prompt: Int32Array, tokens: readonly number[]): number[] {
  const d = new KvDecoder(policy.model, prompt.length + tokens.length);
  let logits = d.prefill(prompt);
  return tokens.map((t) => {
    const lp = samplingLogprobs(logits, 1, 1)[t]!;
    logits = d.step(t);
    return lp;
  });
}
