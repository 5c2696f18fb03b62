import fc from 'fast-check';
import { policyLoss, valueLoss, type PolicyLossInput } from './policy-loss';

const f32 = (xs: number[]) => Float32Array.from(xs);
const base = { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 };

describe('policy loss', () => {
  it('matches hand-computed values: unclipped, clipped high, clipped low, negative advantage', () => {
    // r = 1.1 (inside), A = 1, w = 1 → term 1.1
    // r = 1.5 > 1.28, A = 1 → clipped term 1.28 (no gradient)
    // r = 0.5 < 0.8, A = −1 → unclipped −0.5 vs clipped −0.8: min is −0.8 (clipped, no gradient)
    // r = 0.5, A = +2 → unclipped 1.0 vs clipped 1.6: min is the unclipped 1.0 (gradient flows)
    const r = [1.1, 1.5, 0.5, 0.5];
    const out = policyLoss({ ...base, logp: f32(r.map(Math.log)), logpOld: f32([0, 0, 0, 0]), logpRollout: f32([0, 0, 0, 0]), advantages: f32([1, 1, -1, 2]) });
    expect(out.loss).toBeCloseTo(-(1.1 + 1.28 - 0.8 + 1.0) / 4, 5);
    expect(Array.from(out.grad)).toEqual([expect.closeTo(-1.1 / 4, 5), 0, 0, expect.closeTo(-1.0 / 4, 5)]);
    expect(out.metrics).toMatchObject({ clipFraction: 0.5, clipHighFraction: 0.25, clipLowFraction: 0.25, mismatchAbsLogp: 0, mismatchKl: 0 });
  });

  it('weights each token by the truncated importance weight min(π_old/π_rollout, C) and reports the mismatch', () => {
    const out = policyLoss({ ...base, logp: f32([0, 0]), logpOld: f32([0, 0]), logpRollout: f32([-Math.log(3), Math.log(2)]), advantages: f32([1, 1]) });
    // w = min(3, 2) = 2 and w = 0.5; r = 1.
    expect(out.loss).toBeCloseTo(-(2 + 0.5) / 2, 5);
    expect(out.metrics.tisCappedFraction).toBe(0.5);
    expect(out.metrics.mismatchAbsLogp).toBeCloseTo((Math.log(3) + Math.log(2)) / 2, 5);
    expect(out.metrics.mismatchKl).toBeCloseTo(((3 - 1 - Math.log(3)) + (0.5 - 1 + Math.log(2))) / 2, 5);
  });

  it('has the gradient of finite differences with respect to the log-probabilities', () => {
    fc.assert(fc.property(
      fc.array(fc.record({ d: fc.double({ min: -0.6, max: 0.6, noNaN: true }), old: fc.double({ min: -3, max: -0.1, noNaN: true }), ro: fc.double({ min: -0.8, max: 0.8, noNaN: true }), a: fc.double({ min: -2, max: 2, noNaN: true }) }), { minLength: 1, maxLength: 12 }),
      (toks) => {
        const input: PolicyLossInput = {
          ...base,
          logp: f32(toks.map((t) => t.old + t.d)), logpOld: f32(toks.map((t) => t.old)),
          logpRollout: f32(toks.map((t) => t.old + t.ro)), advantages: f32(toks.map((t) => t.a)),
        };
        const { grad } = policyLoss(input);
        const h = 1e-3;
        toks.forEach((t, i) => {
          const r = Math.exp(t.d);
          // Skip points within h of a clipping kink, where the loss is not differentiable.
          if (Math.abs(r - 0.8) < 0.01 || Math.abs(r - 1.28) < 0.01) return;
          const at = (delta: number) => { const l = input.logp.slice(); l[i] = l[i]! + delta; return policyLoss({ ...input, logp: l }).loss; };
          const fd = (at(h) - at(-h)) / (2 * h);
          expect(Math.abs(grad[i]! - fd)).toBeLessThan(1e-3 * Math.max(1, Math.abs(fd)));
        });
      }), { numRuns: 200 });
  });

  it('has the value loss (V − R)² with gradient 2(V − R)/N', () => {
    const { loss, grad } = valueLoss(f32([0.5, 2]), f32([1, 1]));
    expect(loss).toBeCloseTo((0.25 + 1) / 2, 6);
    expect(Array.from(grad)).toEqual([expect.closeTo(-0.5, 6), expect.closeTo(1, 6)]);
  });
});
