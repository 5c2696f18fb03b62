import { computeStepAdvantages, ErrorCodes } from '@clawgym/core';
import { createTestKernel, makeTree } from '@clawgym/core/testing';
import ppo from './index';

describe('ppo, selected by the config through the registry', () => {
  const config = { algorithm: 'ppo' };
  it('computes A_t = R − V(s_t) per token with value targets R, branches independent', async () => {
    const kernel = await createTestKernel({ plugins: [ppo()], config });
    const t = makeTree({ rolloutId: 'r', reward: 1, generated: [2, 3] });
    const values = new Map([['r', new Map([[1, Float32Array.of(0.25, 0.5)], [3, Float32Array.of(1, 0.75, 2)]])]]);
    // The trainer's value head is asked only for the trainable trees.
    const asked: string[][] = [];
    const result = await computeStepAdvantages(kernel, [t], { name: 'v', values: async (trees) => { asked.push(trees.map((x) => x.rolloutId)); return values; } });
    expect(asked).toEqual([['r']]);
    expect([...result!.advantages.get('r')!.get(1)!]).toEqual([0.75, 0.5]);
    expect([...result!.advantages.get('r')!.get(3)!]).toEqual([0, 0.25, -1]);
    expect([...result!.valueTargets!.get('r')!.get(3)!]).toEqual([1, 1, 1]);
    expect(result!.metrics.tokens).toBe(5);
  });

  it('says what to do when the trainer has no value head', async () => {
    const kernel = await createTestKernel({ plugins: [ppo()], config });
    const failed = computeStepAdvantages(kernel, [makeTree({ rolloutId: 'r', reward: 1 })], { name: 'headless' });
    await expect(failed).rejects.toMatchObject({ code: ErrorCodes.ALGORITHM_NEEDS_VALUES, message: expect.stringContaining('trainer "headless" has no value head') });
  });
});
