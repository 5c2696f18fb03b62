import type { Engine, GeneratedToken, TokenStep } from '../contracts/engine';
import { isClawGymError } from '../errors';
import { drainTokens } from './generate';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An engine that waits `delays[i]` ms before its i-th token, and hangs after the last; `stopped` counts its generator's finally. */
function engineOf(delays: number[], hangAtEnd: boolean, fail?: string): Engine & { stopped: number } {
  const engine = {
    name: 'timed', policyVersion: () => 0, stopped: 0,
    async *generate(): AsyncIterable<GeneratedToken> {
      try {
        for (const [i, d] of delays.entries()) { await sleep(d); yield { tokenId: i, logprob: 0 }; }
        if (fail) throw new Error(fail);
        if (hangAtEnd) await new Promise(() => undefined);
      } finally { engine.stopped++; }
    },
  };
  return engine as unknown as Engine & { stopped: number };
}

/** Busy for `ms` (a caller that handles a token slowly, without letting the event loop run). */
const busy = (ms: number) => { const end = Date.now() + ms; while (Date.now() < end) { /* handling */ } };

async function collect(engine: Engine, firstMs: number, nextMs: number, o: { handleMs?: number; stopAfter?: number; throwAt?: number } = {}) {
  const ids: number[] = [];
  let timedOut = 0;
  try {
    await drainTokens(engine, { promptIds: new Int32Array(0), sampling: { maxTokens: 10, temperature: 1, topP: 1 } }, firstMs, nextMs, () => { timedOut++; }, (t) => {
      ids.push(t.tokenId);
      if (o.throwAt === t.tokenId) throw new Error('the caller failed');
      if (o.handleMs) busy(o.handleMs);
      return o.stopAfter === undefined || ids.length < o.stopAfter;
    });
    return { ids, timedOut };
  } catch (err) {
    return { ids, timedOut, error: isClawGymError(err) ? `${err.code}: ${err.message}` : String(err) };
  }
}

describe('drainTokens', () => {
  it('hands over every token of an engine within its limits, and ends with it', async () => {
    expect(await collect(engineOf([5, 5, 5], false), 200, 200)).toEqual({ ids: [0, 1, 2], timedOut: 0 });
  });

  it('an engine that never starts: the first-token limit, once', async () => {
    const engine = engineOf([], true);
    expect(await collect(engine, 60, 1000)).toEqual({ ids: [], timedOut: 1, error: 'CLAWGYM_ENGINE_FAILED: engine timed produced no first token within 60 ms' });
  });

  it('an engine that stalls mid-stream: the next-token limit, after the tokens so far', async () => {
    const started = Date.now();
    expect(await collect(engineOf([1, 1, 1], true), 1000, 80)).toEqual({ ids: [0, 1, 2], timedOut: 1, error: 'CLAWGYM_ENGINE_FAILED: engine timed produced no token within 80 ms' });
    expect(Date.now() - started).toBeLessThan(900); // the next-token limit, not the first one
  });

  it('counts only the wait for the engine: a caller slower than the limit does not time out', async () => {
    // The limit leaves a loaded machine room to wake a 1 ms timer; the caller is twice as slow.
    expect(await collect(engineOf([1, 1, 1], false), 300, 300, { handleMs: 600 })).toEqual({ ids: [0, 1, 2], timedOut: 0 });
  });

  it('stops the engine when the caller says so, and when the caller throws', async () => {
    const stopped = engineOf([1, 1, 1, 1], false);
    expect(await collect(stopped, 200, 200, { stopAfter: 2 })).toEqual({ ids: [0, 1], timedOut: 0 });
    await sleep(5);
    expect(stopped.stopped).toBe(1);
    const thrown = engineOf([1, 1, 1, 1], false);
    expect(await collect(thrown, 200, 200, { throwAt: 1 })).toEqual({ ids: [0, 1], timedOut: 0, error: 'Error: the caller failed' });
    await sleep(5);
    expect(thrown.stopped).toBe(1);
  });

  it('rejects with the engine\'s own error, after the tokens it gave', async () => {
    expect(await collect(engineOf([1, 1], false, 'engine broke'), 200, 200)).toEqual({ ids: [0, 1], timedOut: 0, error: 'Error: engine broke' });
  });

  it('an engine that yields at once, many times: all of it, in order, no timer left behind', async () => {
    const n = 500;
    const engine = { name: 'instant', policyVersion: () => 0, async *generate() { for (let i = 0; i < n; i++) yield { tokenId: i, logprob: -0.5 }; } } as unknown as Engine;
    const ids: number[] = [];
    await drainTokens(engine, { promptIds: new Int32Array(0), sampling: { maxTokens: n, temperature: 1, topP: 1 } }, 50, 50, () => { throw new Error('no timeout expected'); }, (t) => { ids.push(t.tokenId); return true; });
    expect(ids).toEqual(Array.from({ length: n }, (_, i) => i));
    await sleep(120); // a timer still armed would call onTimeout (and throw) by now
  });

  /** An engine that yields `steps` (arrays of ids are one step), waiting `ms` before each; `stopped` counts its finally. */
  function stepEngine(steps: (number | number[])[], ms: number, hangAtEnd = false) {
    const engine = {
      name: 'steps', policyVersion: () => 0, stopped: 0,
      async *generate(): AsyncIterable<TokenStep> {
        try {
          for (const s of steps) {
            await sleep(ms);
            yield Array.isArray(s) ? s.map((tokenId) => ({ tokenId, logprob: -1 })) : { tokenId: s, logprob: -1 };
          }
          if (hangAtEnd) await new Promise(() => undefined);
        } finally { engine.stopped++; }
      },
    };
    return engine as unknown as Engine & { stopped: number };
  }

  it('hands over the tokens of a step in order, in one go, mixed with single tokens', async () => {
    const engine = stepEngine([[0, 1, 2], 3, [4, 5]], 2);
    const seen: [number, number][] = []; // [token, how many waits for the engine had begun]
    let waits = 0;
    const steps = engine.generate;
    (engine as { generate: Engine['generate'] }).generate = (r) => {
      const it = steps.call(engine, r)[Symbol.asyncIterator]();
      return { [Symbol.asyncIterator]: () => ({ next: () => { waits++; return it.next(); }, return: (v?: unknown) => it.return!(v) }) } as AsyncIterable<TokenStep>;
    };
    await drainTokens(engine, { promptIds: new Int32Array(0), sampling: { maxTokens: 10, temperature: 1, topP: 1 } }, 200, 200, () => undefined, (t) => { seen.push([t.tokenId, waits]); return true; });
    expect(seen).toEqual([[0, 1], [1, 1], [2, 1], [3, 2], [4, 3], [5, 3]]);
  });

  it('stops inside a step when the caller says so: the rest of the step is dropped and the engine stopped', async () => {
    const engine = stepEngine([[0, 1, 2, 3], [4]], 1);
    expect(await collect(engine, 200, 200, { stopAfter: 2 })).toEqual({ ids: [0, 1], timedOut: 0 });
    await sleep(5);
    expect(engine.stopped).toBe(1);
  });

  it('an empty step is not a token: the first-token limit still runs from the first wait', async () => {
    // Empty steps every 20 ms (as a stream's keep-alive chunks would be), never a token.
    const started = Date.now();
    expect(await collect(stepEngine(Array.from({ length: 30 }, () => []), 20, true), 90, 1000)).toEqual({
      ids: [], timedOut: 1, error: 'CLAWGYM_ENGINE_FAILED: engine steps produced no first token within 90 ms',
    });
    expect(Date.now() - started).toBeLessThan(400); // not the next-token limit, nor a wait restarted by each step (600 ms of them)
  });
});
