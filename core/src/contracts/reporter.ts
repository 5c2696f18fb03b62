/** One line of run metrics (one per step, per eval, ...), as written to `metrics.jsonl`. */
export interface MetricsEvent {
  kind: 'step' | 'eval' | 'rollout' | 'info';
  step: number;
  time: number;
  values: Record<string, number | string>;
}

/** Where a run is, as `train` reports it while it works (between the metric events). */
export interface RunProgress {
  /** `eval`: held-out evaluation; `rollouts`: the step's rollouts; `update`: trees, advantages, the trainer step. */
  phase: 'eval' | 'rollouts' | 'update';
  /** The step being worked on (0 for the evaluation before the first step). */
  step: number;
  steps: number;
  /** Rollouts of this phase finished, running and planned. */
  done: number;
  inFlight: number;
  total: number;
  /** Mean reward of this step's finished rollouts (rollouts phase). */
  reward?: number;
  /** The last held-out Pass@1 (0–1), once one was measured. */
  pass1?: number;
  /** Tokens the engine generated per second, over the last step. */
  tokensPerSec?: number;
  /** Seconds left, from the mean time of the steps finished in this process. */
  etaSeconds?: number;
}

/** The run a reporter reports on. */
export interface ReportedRun {
  runId: string;
  runDir: string;
}

/**
 * Turns metrics into something people read or tools load: the metrics file, TensorBoard event
 * files, an HTML report, a log. The run calls `onMetrics` for every event (in order, awaited)
 * and `render` once at its end (also when it fails or is stopped).
 */
export interface Reporter {
  readonly name: string;
  onMetrics?(event: MetricsEvent, run: ReportedRun): void | Promise<void>;
  /** Write a report for a finished (or running) run; returns the file written. */
  render?(runDir: string): Promise<string>;
}
