import { byteChatMl, clippedTisLoss, provider, runStep, trainableNodes, type PolicyLossInput, type RolloutReport } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import { simulateRollout } from '@clawgym/core/testing';
import embedded from './index';

const model = { model: { dModel: 16, layers: 1, heads: 2, context: 512, valueHead: false }, template: { kind: 'chatml' as const } };
const harness = { name: 'sim', wireFormat: 'openai-chat' as const, check: async () => ({ ok: true }), run: async () => ({ exitCode: 0, timedOut: false, logTail: '' }) };
const task = { id: 't1', category: 'files', instruction: 'do it', setup: async () => {}, verify: async () => ({ pass: true, reward: 1, details: '' }) } as never;

/** Rollouts as the runner reports them, with calls a harness made through the proxy's real ledger and template. */
const runner = {
  run: async (jobs: readonly { rolloutId: string; task: { id: string } }[]) => jobs.map((j, i): RolloutReport => ({
    rolloutId: j.rolloutId, sessionId: j.rolloutId, attempts: 1, outcome: 'ok', reward: i === 0 ? 1 : 0.5, details: '', calls: 2, durationMs: 1,
    records: simulateRollout(['step', 'step'], i + 1, j.rolloutId),
    request: { runId: 'r', rolloutId: j.rolloutId, step: 1, taskId: j.task.id, category: 'files', harness: 'sim', instruction: '', env: {}, tags: [], harnessOptions: {} },
  })),
};

describe('a step through the embedded trainer with a third-party algorithm and a third-party policy loss', () => {
  it('uses exactly the algorithm and the loss the config selects, as built-in GRPO and clipped-tis would be', async () => {
    const seen: PolicyLossInput[] = [];
    const kernel = await createTestKernel({
      plugins: [
        embedded(),
        { name: 'acme:reward-advantage', apply: (api) => api.provide.algorithm({ name: 'reward', needsValues: false, computeAdvantages: (input) => ({
          algorithm: 'reward', metrics: {},
          advantages: new Map(input.trees.map((t) => [t.rolloutId, new Map(trainableNodes(t).map((n) => [n.id, new Float32Array(n.tokens.length).fill(10 * t.reward)]))])),
        }) }) },
        // REINFORCE without clipping or importance weight: L = −mean(A · logp).
        { name: 'acme:reinforce', apply: (api) => api.provide.policyLoss({ name: 'reinforce', compute(input) {
          seen.push(input);
          const n = input.logp.length;
          const loss = -input.logp.reduce((s, lp, t) => s + lp * input.advantages[t]!, 0) / n;
          return { loss, grad: input.advantages.map((a) => -a / n), metrics: { mismatchAbsLogp: 0, mismatchKl: 0, clipFraction: 0, tokens: n } };
        } }) },
      ],
      config: { algorithm: 'reward', policyLoss: 'reinforce', engine: { use: 'embedded', options: model }, trainer: 'embedded', run: { tasksPerStep: 1, groupSize: 2 } },
    });
    const ctx = { runDir: '/tmp/clawgym-third-party-step', seed: 1 };
    const engine = await (await provider(kernel, 'engine', kernel.config.engine)).create(model, ctx);
    const trainer = await (await provider(kernel, 'trainer', 'embedded')).create(model, ctx);
    const policyLoss = await provider(kernel, 'policyLoss', kernel.config.policyLoss);
    expect(policyLoss).not.toBe(clippedTisLoss);
    const before = trainer.policyVersion();
    const outcome = await runStep({ kernel, runner, engine, trainer, policyLoss, tasks: [task], harnesses: [{ harness, options: {} }] }, 1, 1);
    // The loss saw each rollout's trained tokens with the algorithm's advantages (10 × reward).
    expect(seen.map((s) => new Set(s.advantages))).toEqual([new Set([10]), new Set([5])]);
    expect(seen.every((s) => s.logp.length > 0 && s.logp.every((x) => x < 0))).toBe(true);
    expect(trainer.policyVersion()).toBe(before + 1);
    // The trainer's loss is the token-weighted mean of what the loss returned.
    const n = seen.map((s) => s.logp.length);
    const mean = seen.reduce((acc, s, i) => acc - (s.logp.reduce((a, lp, t) => a + lp * s.advantages[t]!, 0) / n[i]!) * (n[i]! / (n[0]! + n[1]!)), 0);
    expect(outcome!.train!.loss).toBeCloseTo(mean, 4);
    expect(byteChatMl().chatTemplate.stopIds[0]).toBe(engine.chatTemplate.stopIds[0]);
  });
});
