import type { CallSummary } from '../contracts/records';
import { RunCost } from '../run/cost';
import { moneyOf, rolloutCost, rolloutCostValues } from './cost';
import type { RolloutReport } from './runner';

/** A call head: its prompt length, output, origin and when the engine got and finished it. */
const call = (i: number, promptLength: number, out: number, origin: CallSummary['origin'], ms: number): CallSummary => ({
  runId: 'r', rolloutId: 'x', callIndex: i, wireFormat: 'openai-chat', requestedModel: 'm', promptLength, outputIds: Array(out).fill(1), outputLogprobs: Array(out).fill(0),
  finishReason: 'stop', origin, policyVersion: 0, timings: { receivedAt: 1000 * i, finishedAt: 1000 * i + ms },
});

const report = (records: CallSummary[], over: Partial<RolloutReport> = {}): RolloutReport => ({
  request: { step: 1, taskId: 't', category: 'c', harness: 'h', instruction: '', env: {}, harnessOptions: {} } as unknown as RolloutReport['request'],
  rolloutId: 'x', sessionId: 'x', attempts: 1, outcome: 'ok', reward: 1, details: '', calls: records.length, durationMs: 9000, records,
  phases: { sandboxMs: 200, setupMs: 100, harnessMs: 3000, verifyMs: 700 }, ...over,
});

describe('a rollout\'s cost', () => {
  it('splits prompt tokens into new and reused by each call\'s origin, sums engine time, and takes the sandbox\'s time and CPU', () => {
    const r = report([
      call(0, 100, 10, { kind: 'fork', reason: 'first call' }, 400),
      call(1, 130, 5, { kind: 'reuse', parentCall: 0, reusedTokens: 110 }, 250),
      call(2, 130, 5, { kind: 'retry', of: 1 }, 350),
    ], { usage: { cpuSeconds: 1.5, source: 'cgroup v1 cpuacct.usage' } });
    expect(rolloutCost(r)).toEqual({ sandboxSeconds: 4, cpuSeconds: 1.5, harnessSeconds: 3, engineSeconds: 1, promptNew: 120, promptReused: 240, generated: 20 });
  });

  it('has no CPU figure where the sandbox measured none, and counts it apart in a step\'s figures', () => {
    const measured = report([call(0, 10, 1, { kind: 'fork', reason: 'first call' }, 100)], { usage: { cpuSeconds: 0.5 } });
    const unmeasured = report([call(0, 10, 1, { kind: 'fork', reason: 'first call' }, 100)]);
    expect(rolloutCost(unmeasured).cpuSeconds).toBeUndefined();
    expect(rolloutCostValues([measured, unmeasured])).toMatchObject({ 'cost/rollouts': 2, 'cost/sandbox_cpu_seconds': 0.5, 'cost/cpu_measured': 1, 'cost/sandbox_seconds': 8 });
  });

  it('prices tokens per million, sandboxes per hour and held GPUs per hour, the trainer\'s only where it is held', () => {
    const prices = { currency: 'USD', promptTokens: 2, reusedTokens: 0.5, generatedTokens: 10, trainedTokens: 1, sandboxHour: 0.1, engineGpuHour: 2, engineGpus: 4, trainerGpuHour: 3, trainerGpus: 2 };
    const v = { 'cost/prompt_tokens_new': 1e6, 'cost/prompt_tokens_reused': 2e6, 'cost/generated_tokens': 1e5, 'cost/trainer_tokens': 3e6, 'cost/sandbox_seconds': 7200 };
    expect(moneyOf(v, prices, { seconds: 1800, trainer: true })).toEqual({ 'cost/money': 2 + 1 + 1 + 3 + 0.2 + 4 + 3, 'cost/money/tokens': 7, 'cost/money/sandbox': 0.2, 'cost/money/engine': 4, 'cost/money/trainer': 3 });
    expect(moneyOf(v, prices, { seconds: 1800, trainer: false })['cost/money/trainer']).toBe(0);
  });

  it('carries a run\'s totals over a resume from the last event that had them', () => {
    const before = new RunCost(undefined);
    const first = before.evaluation([report([call(0, 10, 1, { kind: 'fork', reason: 'first call' }, 100)])], 5);
    const resumed = new RunCost(undefined, [{ kind: 'eval', step: 0, time: 0, values: first }, { kind: 'info', step: 0, time: 0, values: { event: 'resume' } }]);
    const step = resumed.step({ reports: [report([call(0, 10, 2, { kind: 'fork', reason: 'first call' }, 100)], { reward: 0.25 })], trees: [], rolloutSeconds: 1, trainSeconds: 0.5, train: { loss: 0, mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: 9 } }, 6);
    expect(step).toMatchObject({ 'cost/generated_tokens': 2, 'cost/trainer_seconds': 0.5, 'cost/trainer_tokens': 9, 'cost/run/generated_tokens': 3, 'cost/run/rollouts': 2, 'cost/run/seconds': 11, 'cost/run/reward': 0.25, 'cost/run/trainer_tokens': 9 });
  });
});
