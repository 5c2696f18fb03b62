import type { Engine, GeneratedToken } from '../contracts/engine';
import { isClawGymError } from '../errors';
import { withTokenTimeouts } from './generate';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An engine that waits `delays[i]` ms before its i-th token, and hangs after the last. */
function engineOf(delays: number[], hangAtEnd: boolean): Engine {
  return {
    name: 'timed', policyVersion: () => 0,
    async *generate(): AsyncIterable<GeneratedToken> {
      for (const [i, d] of delays.entries()) { await sleep(d); yield { tokenId: i, logprob: 0 }; }
      if (hangAtEnd) await new Promise(() => undefined);
    },
  } as unknown as Engine;
}

async function collect(engine: Engine, firstMs: number, nextMs: number, handleMs = 0) {
  const ids: number[] = [];
  let timedOut = 0;
  try {
    for await (const t of withTokenTimeouts(engine, { promptIds: new Int32Array(0), sampling: { maxTokens: 10, temperature: 1, topP: 1 } }, firstMs, nextMs, () => { timedOut++; })) {
      ids.push(t.tokenId);
      if (handleMs) await sleep(handleMs);
    }
    return { ids, timedOut };
  } catch (err) {
    return { ids, timedOut, error: isClawGymError(err) ? `${err.code}: ${err.message}` : String(err) };
  }
}

describe('withTokenTimeouts', () => {
  it('yields every token of an engine within its limits, and ends with it', async () => {
    expect(await collect(engineOf([5, 5, 5], false), 200, 200)).toEqual({ ids: [0, 1, 2], timedOut: 0 });
  });

  it('an engine that never starts: the first-token limit, once', async () => {
    expect(await collect(engineOf([], true), 60, 1000)).toEqual({ ids: [], timedOut: 1, error: 'CLAWGYM_ENGINE_FAILED: engine timed produced no first token within 60 ms' });
  });

  it('an engine that stalls mid-stream: the next-token limit, after the tokens so far', async () => {
    const started = Date.now();
    expect(await collect(engineOf([1, 1, 1], true), 1000, 80)).toEqual({ ids: [0, 1, 2], timedOut: 1, error: 'CLAWGYM_ENGINE_FAILED: engine timed produced no token within 80 ms' });
    expect(Date.now() - started).toBeLessThan(900); // the next-token limit, not the first one
  });

  it('counts only the wait for the engine: a caller slower than the limit does not time out', async () => {
    expect(await collect(engineOf([1, 1, 1, 1], false), 60, 60, 120)).toEqual({ ids: [0, 1, 2, 3], timedOut: 0 });
  });
});
