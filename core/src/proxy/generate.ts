import type { Engine, GenerateRequest, GeneratedToken } from '../contracts/engine';
import { ClawGymError, ErrorCodes } from '../errors';

/**
 * Iterate an engine's tokens with two time limits: the first token within `firstMs`, each
 * next one within `nextMs`, counted while waiting for the engine (not while the caller handles
 * a token). A hung engine becomes an error instead of a harness waiting forever. One timer per
 * call, re-armed at each wait (`refresh`), rather than a timer and a promise race per token:
 * a call streams hundreds of tokens and the proxy's overhead is counted per call.
 */
export async function* withTokenTimeouts(
  engine: Engine, request: GenerateRequest, firstMs: number, nextMs: number, onTimeout: () => void,
): AsyncGenerator<GeneratedToken> {
  const it = engine.generate(request)[Symbol.asyncIterator]();
  let first = true;
  /** Rejects the wait in progress; undefined while the caller has the token. */
  let expire: ((err: Error) => void) | undefined;
  const fire = () => {
    if (!expire) return; // not waiting: the next wait re-arms the timer
    const ms = first ? firstMs : nextMs;
    onTimeout();
    expire(new ClawGymError(ErrorCodes.ENGINE_FAILED, `engine ${engine.name} produced no ${first ? 'first ' : ''}token within ${ms} ms`));
  };
  let timer = setTimeout(fire, firstMs);
  try {
    for (;;) {
      const next = it.next();
      const step = await new Promise<IteratorResult<GeneratedToken>>((resolve, reject) => {
        expire = reject;
        next.then(resolve, reject);
      });
      expire = undefined;
      if (step.done) return;
      yield step.value;
      if (first) { first = false; clearTimeout(timer); timer = setTimeout(fire, nextMs); } else timer.refresh();
    }
  } finally {
    expire = undefined;
    clearTimeout(timer);
    void it.return?.();
  }
}
