import { TinkerModel } from './client';
import { defaultRetry, TinkerHttp } from './http';
import { modelInput, type WireFuture, type WireSampleOutput } from './wire';

/**
 * Against a running Tinker service: SkyRL's `python -m skyrl.tinker.api` on GPUs, or hosted
 * Tinker (`CLAWGYM_TINKER_API_KEY`), or — in CI, where neither can run — ClawGym's own
 * `clawgym trainer serve`, which `.ci/run` starts (`CLAWGYM_TINKER_BASE_MODEL=embedded`). It runs
 * only when `CLAWGYM_TINKER_URL` is set and otherwise skips with that reason. Against our own
 * server it checks the client end to end, not SkyRL: the conformance transcripts are that check.
 */
const url = process.env.CLAWGYM_TINKER_URL;
const baseModel = process.env.CLAWGYM_TINKER_BASE_MODEL ?? 'Qwen/Qwen3-8B';
const live = url ? describe : describe.skip;
if (!url) console.warn('skipping the live Tinker test: set CLAWGYM_TINKER_URL (and CLAWGYM_TINKER_BASE_MODEL) to a running service');

live(`live Tinker service at ${url ?? '(CLAWGYM_TINKER_URL unset)'}`, () => {
  jest.setTimeout(15 * 60_000);

  it('creates a model, scores and trains one datum, steps with lr 0, publishes and samples from the published weights', async () => {
    const http = new TinkerHttp(url!, process.env.CLAWGYM_TINKER_API_KEY, { ...defaultRetry, futureTimeoutMs: 10 * 60_000 });
    const model = await TinkerModel.create(http, { baseModel, loraRank: 8, seed: 1 });
    const datum = { modelInput: Int32Array.from([100, 101, 102, 103]), targetTokens: Int32Array.from([101, 102, 103, 104]), weights: Float32Array.from([0, 1, 1, 1]) };
    const scored = await model.forward([datum]);
    expect(scored.logprobs[0]!.length).toBe(4);
    expect(Array.from(scored.logprobs[0]!).every((x) => x <= 0)).toBe(true);
    const trained = await model.forwardBackward([datum], 'cross_entropy');
    trained.logprobs[0]!.forEach((x, i) => expect(x).toBeCloseTo(scored.logprobs[0]![i]!, 2));
    await model.optimStep({ learningRate: 0, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0 });
    const path = await model.saveForSampler(`clawgym-live-${Date.now()}`);
    expect(path).toMatch(/^tinker:\/\//);
    const future = await http.post<WireFuture>('/api/v1/asample', { num_samples: 1, prompt: modelInput([100, 101, 102]), sampling_params: { max_tokens: 4, seed: 1, temperature: 1, top_k: -1, top_p: 1 }, model_path: path });
    const out = await http.result<WireSampleOutput>(future, 'asample');
    expect(out.sequences[0]!.tokens.length).toBeGreaterThan(0);
    expect(out.sequences[0]!.logprobs.length).toBe(out.sequences[0]!.tokens.length);
  });
});
