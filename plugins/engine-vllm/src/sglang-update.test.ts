import { byteChatMl, type Engine, type GenerateRequest, type PublishedWeights, type TokenStep } from '@clawgym/core';
import { serveEngine, type EngineServer } from '@clawgym/standins';
import { createTokenIdEngine } from './token-id-client';

/*
 * SGLang's weight update from disk and its cache flush, as its source has them, against
 * `clawgym engine serve` made to behave the same way (`sglang: 'modes'`, the pause modes):
 * - sgl-project/sglang@00096b5f python/sglang/srt/managers/tokenizer_communicator_mixin.py
 *   (update_weights_from_distributed): "Immediately update the weights if the engine is in paused
 *   state": paused, the update skips `model_update_lock.writer_lock`; otherwise the writer lock
 *   waits for every request in flight (each holds the reader lock) and holds new ones. The stored
 *   copies of tokenizer_manager.py's update_weights_from_disk read here (their commit not
 *   recorded) take the same `lock_context` in the same words.
 * - sgl-project/sglang@018c9109 python/sglang/srt/managers/scheduler_update_weights_mixin.py:46-51:
 *   after a successful load, `flush_cache_success = self.flush_cache()` then
 *   `assert flush_cache_success, "Cache flush failed after updating weights"`; flush_cache fails
 *   unless the scheduler is fully idle, waiting queue included — where `pause_generation
 *   {mode: "retract"}` puts the running requests (PRs #32153 and #33784, which would allow it,
 *   are open). The assert kills the scheduler, and SGLang's whole server with it.
 */
const { tokenizer, chatTemplate } = byteChatMl();
const END = chatTemplate.stopIds[0]!;

/** An engine that emits one token every `ms`, its logprob telling the weights version that made it. */
function slowEngine(ms: number): Engine & { loads: string[] } {
  let version = 0;
  const loads: string[] = [];
  return {
    name: 'slow', tokenizer, chatTemplate, loads,
    policyVersion: () => version,
    async *generate(r: GenerateRequest): AsyncIterable<TokenStep> {
      for (let i = 0; i < r.sampling.maxTokens - 1; i++) {
        await new Promise((ok) => setTimeout(ok, ms));
        if (r.signal?.aborted) return;
        yield { tokenId: 65, logprob: -1 - version };
      }
      yield { tokenId: END, logprob: -1 - version };
    },
    async syncWeights(w?: PublishedWeights) { if (w) { loads.push(w.path); version = w.version; } },
  };
}

const opened: EngineServer[] = [];
afterEach(async () => { await Promise.all(opened.splice(0).map((s) => s.close())); });
const start = async (engine: Engine) => { const s = await serveEngine(engine, { sglang: 'modes', servedModelName: 'm' }); opened.push(s); return s; };
const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const generate = (url: string) => post(`${url}/generate`, { input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 20 }, return_logprob: true, stream: false });

describe('SGLang: a weight update never meets a retracted request', () => {
  it('the stand-in dies as SGLang does: retract pause, a request queued, update_weights_from_disk', async () => {
    const s = await start(slowEngine(20));
    const inflight = generate(s.url).then((r) => r.text(), (e: unknown) => `cut: ${String(e)}`);
    await new Promise((ok) => setTimeout(ok, 60));
    expect((await post(`${s.url}/pause_generation`, { mode: 'retract' })).status).toBe(200);
    // A standalone flush is refused while the retracted request waits (HTTP 400, not fatal).
    expect((await post(`${s.url}/flush_cache`, {})).status).toBe(400);
    await expect(post(`${s.url}/update_weights_from_disk`, { model_path: '/w/v1', weight_version: '1', flush_cache: true })).rejects.toThrow();
    await expect(fetch(`${s.url}/health`)).rejects.toThrow(); // nothing answers any more
    expect(await inflight).toMatch(/^cut: /);
  });

  it('the client loads without a pause: the update waits for the call in flight, which ends on the old weights, and the server lives', async () => {
    const slow = slowEngine(20);
    const s = await start(slow);
    const e = createTokenIdEngine({ flavor: 'sglang', baseUrl: s.url, model: 'm', tokenizer, chatTemplate, syncRetries: 0, probeIntervalMs: 60_000 });
    const sampling = { maxTokens: 20, temperature: 1, topP: 1, stopIds: [END] };
    const first: number[] = [];
    const running = (async () => { for await (const step of e.generate({ promptIds: Int32Array.from([1, 2, 3]), sessionId: 'a', sampling })) for (const t of Array.isArray(step) ? step : [step]) first.push(t.logprob); })();
    await new Promise((ok) => setTimeout(ok, 80)); // a few tokens in
    await e.syncWeights!({ path: '/w/v1', version: 1, kind: 'full' });
    await running;
    expect(first).toHaveLength(20);
    expect(new Set(first)).toEqual(new Set([-1])); // every token of the call in flight from version 0
    expect(slow.loads).toEqual(['/w/v1']);
    const next: number[] = [];
    for await (const step of e.generate({ promptIds: Int32Array.from([1, 2, 3]), sessionId: 'b', sampling })) for (const t of Array.isArray(step) ? step : [step]) next.push(t.logprob);
    expect(new Set(next)).toEqual(new Set([-2])); // version 1
    expect(e.policyVersion('b')).toBe(1);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    await e.close!();
  });
});
