import type { GeneratedToken, TokenStep } from '../../contracts/engine';

/** The tokens of one step of an engine's stream (see {@link TokenStep}). */
export const tokensOf = (step: TokenStep): readonly GeneratedToken[] => (Array.isArray(step) ? step : [step as GeneratedToken]);

/** An engine's stream one token at a time, for consumers that want tokens, not steps. */
export async function* eachToken(steps: AsyncIterable<TokenStep>): AsyncGenerator<GeneratedToken> {
  for await (const step of steps) {
    if (Array.isArray(step)) yield* step as readonly GeneratedToken[];
    else yield step as GeneratedToken;
  }
}
