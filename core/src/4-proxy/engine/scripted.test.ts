import type { GenerateRequest, TokenStep } from '../../contracts/engine';
import { ScriptedEngine, type ScriptedTurn } from './scripted';
import { tokensOf } from './token-steps';

const request = (maxTokens = 64): GenerateRequest => ({ promptIds: new Int32Array([1, 2]), sampling: { maxTokens, temperature: 1, topP: 1 } });

/** The steps an engine yields (each as its token ids), and its error if it ends in one. */
async function steps(engine: ScriptedEngine, r = request()): Promise<{ steps: number[][]; error?: string }> {
  const out: number[][] = [];
  try {
    for await (const step of engine.generate(r) as AsyncIterable<TokenStep>) out.push(tokensOf(step).map((t) => t.tokenId));
    return { steps: out };
  } catch (err) {
    return { steps: out, error: (err as Error).message };
  }
}

describe('ScriptedEngine steps', () => {
  const turn: ScriptedTurn = { text: 'hello there' };

  it('hands a whole reply over in one step (it exists at once), cut at maxTokens', async () => {
    const engine = new ScriptedEngine(() => turn);
    const ids = engine.replyIds(turn);
    expect(await steps(engine)).toEqual({ steps: [ids] });
    expect(await steps(engine, request(3))).toEqual({ steps: [ids.slice(0, 3)] });
  });

  it('a scripted failure: the tokens before it in one step, then the failure', async () => {
    const engine = new ScriptedEngine(() => ({ ...turn, failAfterTokens: 4 }));
    expect(await steps(engine)).toEqual({ steps: [engine.replyIds(turn).slice(0, 4)], error: 'scripted failure after 4 tokens' });
    const early = new ScriptedEngine(() => ({ ...turn, failAfterTokens: 0 }));
    expect(await steps(early)).toEqual({ steps: [], error: 'scripted failure after 0 tokens' });
  });

  it('with a pause between tokens, one token a step', async () => {
    const engine = new ScriptedEngine(() => ({ ...turn, delayMsPerToken: 1 }));
    const ids = engine.replyIds(turn);
    expect(await steps(engine)).toEqual({ steps: ids.map((id) => [id]) });
  });
});
