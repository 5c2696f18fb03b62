import { ClawGymError, clippedTisLoss, ErrorCodes, type RolloutTree, type TrainerBatch } from '@clawgym/core';
import { computeGrpo } from '@clawgym/algo-grpo';
import { TinkerTrainer, TinkerTrainerOptions } from './trainer';
import { optimizer, startStandIn } from './__fixtures__/stand-in';

/*
 * The temperature the service scores at. NovaSky-AI/SkyRL@a9564572:
 * - skyrl/backends/skyrl_train/workers/worker.py:980 (and :1255, :1329) compute the policy's
 *   logprobs with `temperature=self.cfg.algorithm.temperature`, one value for the whole server;
 * - skyrl/train/config/config.py:1004 (generator sampling temperature 1.0) and :1735-1738 copy it
 *   into `trainer.algorithm.temperature` unless --backend-config sets it.
 * The Tinker API's forward/forward_backward carry no temperature. SGLang's logprobs (and vLLM's
 * with processed logprobs) are those of the tempered distribution the engine sampled from. So a
 * harness sampling at 0.7 against a service scoring at 1 makes π_old/π_rollout compare two
 * different distributions: refused before anything is sent.
 */
const ids = (...xs: number[]) => Int32Array.from(xs);
const tree = (k: number, temperature?: number): RolloutTree => ({
  rolloutId: `r${k}`, taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: k, auxiliaryRoots: [], filterCounts: {},
  nodes: [
    { id: 0, parent: -1, kind: 'inserted', tokens: ids(10, 11, 12), callIndex: 0 },
    { id: 1, parent: 0, kind: 'generated', tokens: ids(40 + k, 41, 42), logprobs: Float32Array.from([-2, -2.3, -2.6]), callIndex: 0, ...(temperature === undefined ? {} : { sampling: { temperature, topP: 1 } }) },
  ],
});
const batchOf = (trees: RolloutTree[]): TrainerBatch => ({ trees, advantages: computeGrpo({ algorithm: 'grpo', options: {}, trees }), loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss });
const retry = { attempts: 2, baseDelayMs: 10, maxDelayMs: 50, requestTimeoutMs: 5000, futureTimeoutMs: 20_000 };

describe('the tinker trainer and the temperature the service scores at', () => {
  let standIn: Awaited<ReturnType<typeof startStandIn>>;
  beforeAll(async () => { standIn = await startStandIn(); });
  afterAll(async () => { await standIn.stop(); });
  const client = (extra: Record<string, unknown> = {}) => TinkerTrainer.create(TinkerTrainerOptions.parse({ baseUrl: standIn.url, optimizer, retry, loraRank: 0, ...extra }), 1);

  it('refuses a step sampled at 0.7 when the service scores at 1, before sending anything, naming the setting', async () => {
    const trainer = await client();
    const err = await trainer.step(batchOf([tree(0, 0.7), tree(1, 0.7)])).then(() => undefined, (e: unknown) => e) as ClawGymError;
    expect(err).toBeInstanceOf(ClawGymError);
    expect(err.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(err.message).toMatch(/sampled at temperature 0\.7, but the trainer service scores them at 1/);
    expect(err.hint).toContain(`--backend-config '{"trainer.algorithm.temperature": 0.7}'`);
    expect(err.hint).toContain('trainer.options.temperature: 0.7');
    expect(trainer.modelId).toBe(''); // no model was even created
    expect(standIn.trainer.policyVersion()).toBe(0);
    await trainer.close();
  });

  it('steps where the temperatures agree: the default 1, or the server started at 0.7 and said so', async () => {
    const plain = await client();
    await plain.step(batchOf([tree(0), tree(1)]));
    expect(plain.policyVersion()).toBe(1);
    await plain.close();
    const tempered = await client({ temperature: 0.7 });
    await tempered.step(batchOf([tree(0, 0.7), tree(1, 0.7)]));
    expect(tempered.policyVersion()).toBe(1);
    await expect(tempered.step(batchOf([tree(0), tree(1)]))).rejects.toThrow(/sampled at temperature 1, but the trainer service scores them at 0\.7/);
    await tempered.close();
  });
});
