import type { Engine, GenerateRequest, GeneratedToken } from '../contracts/engine';
import { ClawGymError, ErrorCodes } from '../errors';

/**
 * Iterate an engine's tokens with two time limits: the first token within `firstMs`, each
 * next one within `nextMs`, counted while waiting for the engine (not while the caller handles
 * a token). A hung engine becomes an error instead of a harness waiting forever. A call streams
 * hundreds of tokens and the proxy's overhead is counted per call, so a wait costs a clock read
 * and one promise: one timer per call, armed for the shorter limit, checks when it fires how
 * long the wait in progress has lasted and arms itself again for what is left of it (only a
 * wait longer than the shorter limit gets there); the handlers are made once per call, not per
 * token, and there is no generator around the engine's iterator.
 */
export function withTokenTimeouts(
  engine: Engine, request: GenerateRequest, firstMs: number, nextMs: number, onTimeout: () => void,
): AsyncIterableIterator<GeneratedToken> {
  const it = engine.generate(request)[Symbol.asyncIterator]();
  let first = true;
  let done = false;
  /** When the wait in progress began (performance.now()); its promise's handlers, undefined while the caller has the token. */
  let waitStart = 0;
  let resolveWait: ((r: IteratorResult<GeneratedToken>) => void) | undefined;
  let rejectWait: ((err: unknown) => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now()). */
  let deadline = 0;
  const arm = (ms: number) => {
    const wait = Math.max(1, Math.ceil(ms));
    deadline = performance.now() + wait;
    timer = setTimeout(fire, wait);
  };
  const finish = () => {
    done = true;
    resolveWait = undefined;
    rejectWait = undefined;
    clearTimeout(timer);
    timer = undefined;
  };
  function fire(): void {
    timer = undefined;
    const reject = rejectWait;
    if (done || !reject) return; // not waiting: the next wait arms it again
    const ms = first ? firstMs : nextMs;
    const left = waitStart + ms - performance.now();
    if (left > 0) { arm(left); return; }
    onTimeout();
    finish();
    void it.return?.();
    reject(new ClawGymError(ErrorCodes.ENGINE_FAILED, `engine ${engine.name} produced no ${first ? 'first ' : ''}token within ${ms} ms`));
  }
  const onStep = (r: IteratorResult<GeneratedToken>) => {
    const resolve = resolveWait;
    if (done || !resolve) return; // timed out meanwhile
    resolveWait = undefined;
    rejectWait = undefined;
    if (r.done) finish();
    else first = false;
    resolve(r);
  };
  const onError = (err: unknown) => {
    const reject = rejectWait;
    if (done || !reject) return;
    finish();
    reject(err);
  };
  const wait = (resolve: (r: IteratorResult<GeneratedToken>) => void, reject: (err: unknown) => void) => {
    resolveWait = resolve;
    rejectWait = reject;
    try { it.next().then(onStep, onError); } catch (err) { onError(err); }
  };
  const self: AsyncIterableIterator<GeneratedToken> = {
    [Symbol.asyncIterator]: () => self,
    next: () => {
      if (done) return Promise.resolve({ done: true, value: undefined });
      waitStart = performance.now();
      const ms = first ? firstMs : nextMs;
      // Armed for this wait unless the armed timer already fires by this wait's limit.
      if (timer === undefined || deadline > waitStart + ms) {
        clearTimeout(timer);
        arm(Math.min(ms, firstMs, nextMs));
      }
      return new Promise<IteratorResult<GeneratedToken>>(wait);
    },
    return: () => {
      if (!done) { finish(); void it.return?.(); }
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return self;
}
