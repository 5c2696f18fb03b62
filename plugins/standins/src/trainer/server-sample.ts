import { messageOf, tokensOf, type Engine } from '@clawgym/core';
import { inputTokens, type WireModelInput, type WireSampleOutput } from '@clawgym/engine-tinker';

/** A future of the stand-in: done once `result` or `error` is set. */
export interface Future { type: string; done: boolean; result?: unknown; error?: string; waiters: (() => void)[] }

export function settle(f: Future, result: unknown, error?: string): void {
  if (error !== undefined) f.error = error; else f.result = result;
  f.done = true;
  for (const w of f.waiters.splice(0)) w();
}

/**
 * Run an `asample` on the in-process engine into `f`, beside the training queue (as SkyRL's
 * inference engines run beside its trainer). Seeds go up by one per sample, as SkyRL's
 * `prepare_sample_batch` derives them.
 */
export function runSample(engine: Engine, b: Record<string, any>, f: Future): void {
  const sp = b.sampling_params ?? {};
  const prompt = Int32Array.from(inputTokens(b.prompt as WireModelInput));
  const stops = Array.isArray(sp.stop) && sp.stop.every((x: unknown) => typeof x === 'number') ? sp.stop as number[] : [];
  void (async () => {
    try {
      const sequences: WireSampleOutput['sequences'] = [];
      const stopSet = new Set([...engine.chatTemplate.stopIds, ...stops]);
      for (let s = 0; s < (b.num_samples ?? 1); s++) {
        const tokens: number[] = [];
        const logprobs: number[] = [];
        for await (const step of engine.generate({ promptIds: prompt, sampling: { maxTokens: sp.max_tokens, temperature: sp.temperature ?? 1, topP: sp.top_p ?? 1, stopIds: stops, ...(sp.seed != null ? { seed: sp.seed + s } : {}) } })) {
          for (const t of tokensOf(step)) {
            tokens.push(t.tokenId);
            logprobs.push(t.logprob);
          }
        }
        sequences.push({ stop_reason: tokens.length && stopSet.has(tokens[tokens.length - 1]!) ? 'stop' : 'length', tokens, logprobs });
      }
      settle(f, { sequences, prompt_logprobs: null } satisfies WireSampleOutput);
    } catch (e) {
      settle(f, undefined, messageOf(e));
    }
  })();
}
