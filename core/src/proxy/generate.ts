import type { Engine, GenerateRequest, GeneratedToken } from '../contracts/engine';
import { ClawGymError, ErrorCodes } from '../errors';

/**
 * Iterate an engine's tokens with two time limits: the first token within `firstMs`, each
 * next one within `nextMs`, counted while waiting for the engine (not while the caller handles
 * a token). A hung engine becomes an error instead of a harness waiting forever. One timer per
 * call, re-armed at each wait (`refresh`), rather than a timer and a promise race per token,
 * and a plain iterator rather than a generator around the engine's: a call streams hundreds of
 * tokens and the proxy's overhead is counted per call.
 */
export function withTokenTimeouts(
  engine: Engine, request: GenerateRequest, firstMs: number, nextMs: number, onTimeout: () => void,
): AsyncIterableIterator<GeneratedToken> {
  const it = engine.generate(request)[Symbol.asyncIterator]();
  let first = true;
  let done = false;
  /** Rejects the wait in progress; undefined while the caller has the token. */
  let expire: ((err: Error) => void) | undefined;
  const fire = () => {
    if (!expire) return; // not waiting: the next wait re-arms the timer
    const ms = first ? firstMs : nextMs;
    onTimeout();
    expire(new ClawGymError(ErrorCodes.ENGINE_FAILED, `engine ${engine.name} produced no ${first ? 'first ' : ''}token within ${ms} ms`));
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(fire, firstMs);
  let waits = 0;
  const finish = () => {
    done = true;
    expire = undefined;
    clearTimeout(timer);
    timer = undefined;
  };
  const self: AsyncIterableIterator<GeneratedToken> = {
    [Symbol.asyncIterator]: () => self,
    next: () => {
      if (done) return Promise.resolve({ done: true, value: undefined });
      // The wait for a token after the first: the next-token limit, from now.
      if (waits++ === 1) { clearTimeout(timer); timer = setTimeout(fire, nextMs); } else if (waits > 2) timer!.refresh();
      const step = it.next();
      return new Promise<IteratorResult<GeneratedToken>>((resolve, reject) => {
        expire = (err) => { finish(); void it.return?.(); reject(err); };
        step.then((r) => {
          if (done) return; // timed out meanwhile
          expire = undefined;
          if (r.done) finish();
          else first = false;
          resolve(r);
        }, (err: unknown) => { if (!done) { finish(); reject(err); } });
      });
    },
    return: () => {
      if (!done) { finish(); void it.return?.(); }
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return self;
}
