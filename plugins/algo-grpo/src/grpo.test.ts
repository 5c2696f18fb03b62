import { createTestKernel, makeTree } from '@clawgym/core/testing';
import { applyFilters, computeStepAdvantages } from '@clawgym/core';
import grpo from './index';

const adv = (r: Awaited<ReturnType<typeof run>>, id: string) => [...r!.advantages.get(id)!.values()].map((a) => [...a]);
async function run(trees: ReturnType<typeof makeTree>[], options: Record<string, unknown> = {}) {
  const kernel = await createTestKernel({ plugins: [grpo()], config: { algorithm: { use: 'grpo', options } } });
  return computeStepAdvantages(kernel, trees);
}

describe('grpo, selected by the config through the registry', () => {
  it('normalises rewards inside a group and broadcasts to every generated token', async () => {
    // rewards 1, 0, 0, 1: mean 0.5, std 0.5 → advantages ±1 (ε = 1e-6)
    const trees = [1, 0, 0, 1].map((reward, i) => makeTree({ rolloutId: `r${i}`, reward, generated: [2, 3] }));
    const result = await run(trees);
    expect(adv(result, 'r0')).toEqual([[expect.closeTo(1, 5), expect.closeTo(1, 5)], [expect.closeTo(1, 5), expect.closeTo(1, 5), expect.closeTo(1, 5)]]);
    expect(adv(result, 'r1')[0]).toEqual([expect.closeTo(-1, 5), expect.closeTo(-1, 5)]);
    expect(result!.metrics).toMatchObject({ groups: 1, flatGroups: 0, rollouts: 4, tokens: 20 });
  });

  it('matches hand-computed values with and without std normalisation', async () => {
    // rewards 1, 0.5, 0: mean 0.5, population std sqrt(1/6) = 0.408248
    const trees = [1, 0.5, 0].map((reward, i) => makeTree({ rolloutId: `r${i}`, reward }));
    const withStd = await run(trees);
    expect(adv(withStd, 'r0')[0]![0]).toBeCloseTo(0.5 / 0.408248, 4);
    expect(adv(withStd, 'r1')[0]![0]).toBeCloseTo(0, 6);
    const noStd = await run(trees, { normalizeStd: false });
    expect(adv(noStd, 'r2')[0]![0]).toBeCloseTo(-0.5, 6);
  });

  it('keeps mix-harness groups apart: one harness\'s higher rewards leave the other\'s advantages unchanged', async () => {
    const a = [1, 0, 1, 0].map((reward, i) => makeTree({ rolloutId: `a${i}`, reward, harness: 'agentloop' }));
    const b = [0.2, 0.4, 0.6, 0.8].map((reward, i) => makeTree({ rolloutId: `b${i}`, reward, harness: 'claude-code' }));
    const alone = await run(a);
    const bHigher = b.map((t) => ({ ...t, reward: t.reward + 0.2 }));
    const mixed = await run([...a, ...bHigher]);
    for (let i = 0; i < 4; i++) expect(adv(mixed, `a${i}`)).toEqual(adv(alone, `a${i}`));
    expect(mixed!.metrics.groups).toBe(2);
  });

  it('skips dropped rollouts, infra failures, auxiliary trees and filtered nodes', async () => {
    const kept = makeTree({ rolloutId: 'k', reward: 1, generated: [2, 2] });
    kept.nodes[3]!.removedBy = 'dead-leaf';
    const withAux = makeTree({ rolloutId: 'x', reward: 0 });
    withAux.auxiliaryRoots = [0];
    applyFilters(withAux, { dropDeadLeaves: true, excludeAuxiliary: true, maxBranches: 8 });
    const infra = { ...makeTree({ rolloutId: 'i', reward: 0 }), outcome: 'infra-error' as const };
    const dropped = { ...makeTree({ rolloutId: 'd', reward: 0 }), dropped: 'over-branching' };
    const result = await run([kept, withAux, infra, dropped]);
    expect([...result!.advantages.keys()]).toEqual(['k']);
    expect([...result!.advantages.get('k')!.keys()]).toEqual([1]);
    expect(result!.metrics.flatGroups).toBe(1);
  });

  it('rejects unknown options with a suggestion', async () => {
    await expect(run([makeTree({ rolloutId: 'r', reward: 1 })], { normaliseStd: false }))
      .rejects.toThrow('normaliseStd: unknown key. Did you mean "normalizeStd"?');
  });
});
