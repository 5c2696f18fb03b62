import type { RunProgress } from '../contracts/reporter';
import type { RolloutReport } from '../6-rollout/runner';
import { ProgressTracker } from './progress';

const done = (reward: number, outcome: RolloutReport['outcome'], n: number) => ({ kind: 'done' as const, rolloutId: `r${n}`, report: { outcome, reward } as RolloutReport, inFlight: 1, done: n, total: 4 });

describe('run progress', () => {
  it('shows the mean reward of the scored rollouts so far (infra failures apart), and an ETA from the steps done', () => {
    const seen: RunProgress[] = [];
    const p = new ProgressTracker(0, 10, (x) => seen.push(x));
    p.phase('rollouts', 1, 4);
    p.onRollout(done(1, 'ok', 1));
    p.onRollout(done(Number.NaN, 'infra-error', 2));
    p.onRollout({ kind: 'retry', rolloutId: 'r2', inFlight: 1, done: 2, total: 4 });
    p.onRollout(done(0, 'harness-error', 3));
    expect(seen.map((s) => s.reward)).toEqual([undefined, 1, 1, 0.5]);
    expect(seen.at(-1)).toMatchObject({ phase: 'rollouts', step: 1, done: 3, total: 4, inFlight: 1 });
    p.stepDone(4, 1);
    p.stepDone(6, 2);
    expect(seen.at(-1)!.etaSeconds).toBe(5 * 8);
    // A new phase starts its counts and reward again.
    p.phase('eval', 2, 3);
    expect(seen.at(-1)).toMatchObject({ phase: 'eval', done: 0, total: 3, reward: undefined });
  });
});
