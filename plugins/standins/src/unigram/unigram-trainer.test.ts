import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdamOptions, byteChatMl, ScriptedEngine, type Datum, type DatumLoss } from '@clawgym/core';
import { UnigramDatumTrainer, UnigramTrainer } from './unigram-trainer';
import { UnigramScriptedEngine } from './unigram-engine';

const datum = (input: number[], target: number[], extra: Partial<Datum> = {}): Datum => ({
  modelInput: Int32Array.from(input), targetTokens: Int32Array.from(target), weights: new Float32Array(target.length).fill(1), ...extra,
});

describe('the unigram trainer (the stand-in trainer over a real vocabulary)', () => {
  it('scores a target as logits[t] − logsumexp(logits), whatever the context', async () => {
    const t = new UnigramDatumTrainer(Float32Array.from([0.5, -1, 2, 0]));
    const lse = Math.log(Math.exp(0.5) + Math.exp(-1) + Math.exp(2) + 1);
    const { logprobs } = await t.forward([datum([0, 1, 3], [2, 2, 1])]);
    expect(Array.from(logprobs[0]!)).toEqual([2 - lse, 2 - lse, -1 - lse].map((x) => Math.fround(x)));
  });

  it.each<[DatumLoss]>([['cross_entropy'], ['importance_sampling'], ['ppo']])('%s: the gradient it applies is the loss\'s own (finite differences)', async (loss) => {
    const logits = Float32Array.from([0.3, -0.2, 0.1, 0.7, -0.5]);
    const d = datum([0, 1, 2], [3, 1, 3], { logprobs: Float32Array.from([-1.2, -1.9, -1.4]), advantages: Float32Array.from([0.8, -0.5, 0.8]), weights: Float32Array.from([1, 1, 0.5]) });
    const cfg = { clipLowThreshold: 0.8, clipHighThreshold: 1.3 };
    const lossAt = async (l: Float32Array) => (await new UnigramDatumTrainer(Float32Array.from(l)).forwardBackward([d], loss, cfg)).loss!;
    const t = new UnigramDatumTrainer(Float32Array.from(logits));
    await t.forwardBackward([d], loss, cfg);
    // The accumulated gradient itself (Adam's update is sign-like, so read it before the step).
    const grad = (t as unknown as { grad: Float64Array }).grad;
    for (let v = 0; v < logits.length; v++) {
      const h = 1e-3;
      const up = Float32Array.from(logits); up[v]! += h;
      const down = Float32Array.from(logits); down[v]! -= h;
      expect(grad[v]).toBeCloseTo(((await lossAt(up)) - (await lossAt(down))) / (2 * h), 2);
    }
  });

  it('refuses what a real model\'s trainer cannot run: an id outside the vocabulary, lengths that disagree', async () => {
    const t = new UnigramDatumTrainer(new Float32Array(4));
    await expect(t.forward([datum([0, 4], [1, 2])])).rejects.toThrow(/token id 4, outside the model's vocabulary of 4/);
    await expect(t.forwardBackward([datum([0, 1], [1, 2], { weights: new Float32Array(1) })], 'cross_entropy')).rejects.toThrow(/2 input tokens but 2 targets and 1 weights/);
  });

  it('cross-entropy steps raise the trained tokens\' logprob; the checkpoint restores logits, Adam state and version', async () => {
    const model = byteChatMl();
    const trainer = new UnigramTrainer(model.tokenizer.vocabSize, AdamOptions.parse({}));
    const ids = model.tokenizer.encode('hello world');
    const d = datum([...ids.slice(0, -1)], [...ids.slice(1)]);
    const before = (await trainer.datums.forward([d])).logprobs[0]![0]!;
    expect(before).toBeCloseTo(-Math.log(model.tokenizer.vocabSize), 4);
    for (let i = 0; i < 3; i++) {
      await trainer.datums.forwardBackward([d], 'cross_entropy');
      await trainer.datums.optimStep({ learningRate: 0.1, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0 });
    }
    const after = (await trainer.datums.forward([d])).logprobs[0]!;
    expect(after[0]!).toBeGreaterThan(before + 0.1);
    const dir = mkdtempSync(join(tmpdir(), 'unigram-'));
    try {
      await trainer.save(dir);
      const back = new UnigramTrainer(model.tokenizer.vocabSize, AdamOptions.parse({}));
      await back.load(dir);
      expect(back.policyVersion()).toBe(3);
      expect(Array.from((await back.datums.forward([d])).logprobs[0]!)).toEqual(Array.from(after));
      expect(back.datums.t).toBe(3);
      await back.load(dir, { weightsOnly: true });
      expect([back.policyVersion(), back.datums.t]).toEqual([0, 0]);
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });

  it('the scripted engine reports its reply tokens\' logprobs under the unigram weights the trainer published, as the trainer reads them', async () => {
    const model = byteChatMl();
    const trainer = new UnigramTrainer(model.tokenizer.vocabSize, AdamOptions.parse({}));
    const engine = new UnigramScriptedEngine(() => ({ text: 'Done.' }), model);
    const reply = engine.replyIds({ text: 'Done.' });
    await trainer.datums.forwardBackward([datum(reply.map(() => 0), reply)], 'cross_entropy');
    await trainer.datums.optimStep({ learningRate: 0.05, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'unigram-'));
    try {
      await trainer.save(dir);
      await engine.syncWeights({ path: dir, version: 1, kind: 'full' });
      const steps = [];
      for await (const s of engine.generate({ promptIds: Int32Array.from(model.tokenizer.encode('hi')), sampling: { maxTokens: 100 } as never })) steps.push(...(Array.isArray(s) ? s : [s]));
      expect(steps.map((s) => s.tokenId)).toEqual(reply);
      const scored = (await trainer.datums.forward([datum(reply.map(() => 0), reply)])).logprobs[0]!;
      expect(steps.map((s) => Math.fround(s.logprob))).toEqual(Array.from(scored));
      expect(scored[0]!).toBeGreaterThan(-Math.log(model.tokenizer.vocabSize) + 0.05);
      expect(engine.policyVersion()).toBe(1);
      await expect(engine.syncWeights({ path: dir, version: 2, kind: 'lora' })).rejects.toThrow(/LoRA adapter/);
      const other = join(dir, 'other');
      await new UnigramTrainer(1000, AdamOptions.parse({})).save(other);
      await expect(engine.syncWeights({ path: other, version: 2, kind: 'full' })).rejects.toThrow(`has a vocabulary of 1000 tokens, this model ${model.tokenizer.vocabSize}`);
      await expect(new ScriptedEngine(() => ({ text: 'x' })).syncWeights({ path: dir, version: 2, kind: 'full' })).rejects.toThrow(/holds no weights to load/);
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
