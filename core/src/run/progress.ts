import type { RunProgress } from '../contracts/reporter';
import type { RunnerOptions } from '../6-rollout/runner';

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * Where a run is between its metric events (rollouts done and running, reward so far, tokens/s,
 * ETA), for a live display. The run's own numbers stay in the metrics.
 */
export class ProgressTracker {
  private readonly live: RunProgress;
  /** Tokens the engine generated in this process (counted from the stored call records). */
  generated = 0;
  private readonly stepSeconds: number[] = [];
  private rewardSum = 0;
  private rewardCount = 0;

  constructor(step: number, steps: number, private readonly listener?: (p: RunProgress) => void) {
    this.live = { phase: 'eval', step, steps, done: 0, inFlight: 0, total: 0 };
  }

  update(p: Partial<RunProgress>): void {
    Object.assign(this.live, p);
    this.listener?.({ ...this.live });
  }

  /** A new phase: counts and this step's reward start again. */
  phase(phase: RunProgress['phase'], step: number, total: number): void {
    this.rewardSum = 0;
    this.rewardCount = 0;
    this.update({ phase, step, done: 0, inFlight: 0, total, reward: undefined });
  }

  /** The rollout runner's events: counts, and the mean reward of the scored rollouts so far. */
  readonly onRollout: NonNullable<RunnerOptions['onProgress']> = (e) => {
    if (e.kind === 'retry') return;
    if (e.kind === 'done' && e.report && e.report.outcome !== 'infra-error') { this.rewardSum += e.report.reward; this.rewardCount++; }
    this.update({ done: e.done, inFlight: e.inFlight, total: e.total, reward: this.rewardCount ? this.rewardSum / this.rewardCount : undefined });
  };

  /** A step finished after `seconds`: the ETA from the mean of this process's steps. */
  stepDone(seconds: number, step: number): void {
    this.stepSeconds.push(seconds);
    this.update({ etaSeconds: mean(this.stepSeconds) * (this.live.steps - step) });
  }

  set pass1(value: number) { this.live.pass1 = value; }
}
