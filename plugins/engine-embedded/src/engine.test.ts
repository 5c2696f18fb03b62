import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTree, byteChatMl, clippedTisLoss, type ModelCallRecord } from '@clawgym/core';
import { cpuKernels } from '@clawgym/kernels-cpu';
import { KvDecoder } from './decode';
import { EmbeddedEngine } from './engine';
import type { ModelConfig } from './model';
import { SharedPolicy } from './policy';
import { EmbeddedTrainer } from './trainer';

const { tokenizer, chatTemplate } = byteChatMl();
const config: ModelConfig = { vocabSize: tokenizer.vocabSize, dModel: 32, layers: 2, heads: 4, context: 128, mlpHidden: 64, valueHead: true };
const opt = { lr: 1e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, gradClip: 1, warmupSteps: 0 };
const prompt = Int32Array.from(chatTemplate.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [] }));

async function sample(engine: EmbeddedEngine, seed: number, maxTokens = 24) {
  const out: { tokenId: number; logprob: number }[] = [];
  for await (const t of engine.generate({ promptIds: prompt, sampling: { maxTokens, temperature: 1, topP: 1, seed } })) out.push(t);
  return out;
}

const record = (out: { tokenId: number; logprob: number }[]): ModelCallRecord => ({
  runId: 'r', rolloutId: 'a', callIndex: 0, wireFormat: 'openai-chat', requestedModel: 'm', promptIds: prompt,
  outputIds: out.map((t) => t.tokenId), outputLogprobs: out.map((t) => t.logprob), finishReason: 'stop',
  origin: { kind: 'fork', reason: 'first call of the session' }, policyVersion: 0, timings: { receivedAt: 0, finishedAt: 0 },
});

describe('embedded engine and trainer', () => {
  const dirs: string[] = [];
  const tmp = (prefix: string) => { const d = mkdtempSync(join(tmpdir(), prefix)); dirs.push(d); return d; };
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('samples reproducibly from a seed, and its logprobs equal the trainer\'s recomputed ones', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 5);
    const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 5);
    const a = await sample(engine, 42);
    expect(await sample(engine, 42)).toEqual(a);
    expect(await sample(engine, 43)).not.toEqual(a);
    const tree = buildTree([record(a)], { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 }, { messageEndId: tokenizer.special('<|im_end|>') });
    const trainer = new EmbeddedTrainer(policy, opt);
    const recomputed = [...(await trainer.logprobs([tree])).get('a')!.values()][0]!;
    const diffs = a.map((t, i) => Math.abs(t.logprob - recomputed[i]!));
    expect(diffs.reduce((s, d) => s + d, 0) / diffs.length).toBeLessThanOrEqual(1e-4);
  });

  it('at temperature 0.7 and top-p 0.9 the trainer scores the tokens under the distribution they were sampled from: engine/trainer mismatch at float noise', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 5);
    // Sharper logits than a fresh init, so the nucleus cuts real tokens away.
    for (const [name, p] of policy.model.params) if (/emb|out|head/.test(name)) for (let i = 0; i < p.length; i++) p[i] = p[i]! * 4;
    const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 5);
    const out: { tokenId: number; logprob: number }[] = [];
    for await (const t of engine.generate({ promptIds: prompt, sampling: { maxTokens: 32, temperature: 0.7, topP: 0.9, seed: 7, stopIds: [] } })) out.push(t);
    const info = { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok' as const, reward: 1 };
    const sampled = buildTree([{ ...record(out), sampling: { temperature: 0.7, topP: 0.9, logprobs: 'processed' } }], info, { messageEndId: tokenizer.special('<|im_end|>') });
    expect(sampled.nodes.find((n) => n.kind === 'generated')!.sampling).toEqual({ temperature: 0.7, topP: 0.9 });
    const trainer = new EmbeddedTrainer(policy, opt);
    const mean = (xs: number[]) => xs.reduce((s, d) => s + d, 0) / xs.length;
    const scored = [...(await trainer.logprobs([sampled])).get('a')!.values()][0]!;
    const diffs = out.map((t, i) => Math.abs(t.logprob - scored[i]!));
    expect(mean(diffs)).toBeLessThanOrEqual(1e-5);
    expect(Math.max(...diffs)).toBeLessThanOrEqual(1e-4);
    // Scored as plain softmax (temperature 1, no nucleus), as before: far from the engine's.
    const plain = buildTree([record(out)], info, { messageEndId: tokenizer.special('<|im_end|>') });
    const raw = [...(await trainer.logprobs([plain])).get('a')!.values()][0]!;
    expect(mean(out.map((t, i) => Math.abs(t.logprob - raw[i]!)))).toBeGreaterThan(0.05);
    // The step reads the same mismatch, and a positive advantage raises the tempered logprobs.
    const gen = sampled.nodes.filter((n) => n.kind === 'generated');
    const step = await trainer.step({
      trees: [sampled], advantages: { algorithm: 'test', advantages: new Map([['a', new Map(gen.map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))]]), metrics: {} },
      loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2 }, policyLoss: clippedTisLoss,
    });
    expect(step.mismatchAbsLogp).toBeLessThanOrEqual(1e-5);
    expect(step.clipFraction).toBe(0);
    const after = [...(await trainer.logprobs([sampled])).get('a')!.values()][0]!;
    expect(after.reduce((a, b) => a + b, 0)).toBeGreaterThan(scored.reduce((a, b) => a + b, 0));
    expect(after.every(Number.isFinite)).toBe(true);
  });

  it('prefills a repeated prompt once, samples from it as a fresh engine would, and never reuses it after the weights change', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 8);
    const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 8);
    const prefill = jest.spyOn(KvDecoder.prototype, 'prefill');
    try {
      const a = await sample(engine, 42);
      const b = await sample(engine, 43);
      expect(prefill).toHaveBeenCalledTimes(1);
      expect(await sample(new EmbeddedEngine(policy, tokenizer, chatTemplate, 8), 43)).toEqual(b);
      expect(await sample(engine, 42)).toEqual(a); // the decoder taken from the cache was a copy
      // The trainer changes the weights in place and bumps the version: the prompt is read again.
      for (const p of policy.model.params.values()) for (let i = 0; i < p.length; i++) p[i] = p[i]! * 1.5;
      policy.version++;
      prefill.mockClear();
      const c = await sample(engine, 42);
      expect(prefill).toHaveBeenCalled();
      expect(c).toEqual(await sample(new EmbeddedEngine(policy, tokenizer, chatTemplate, 8), 42));
      expect(c).not.toEqual(a);
    } finally {
      prefill.mockRestore();
    }
  });

  it('learns: supervised steps raise the likelihood of a demonstration', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 6);
    const trainer = new EmbeddedTrainer(policy, { ...opt, lr: 3e-3 });
    const reply = chatTemplate.renderReply([{ type: 'text', text: 'hello there' }]);
    const rec = record(reply.map((tokenId) => ({ tokenId, logprob: 0 })));
    const tree = buildTree([rec], { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 }, { messageEndId: tokenizer.special('<|im_end|>') });
    const first = await trainer.supervisedStep([tree]);
    let last = first;
    for (let i = 0; i < 30; i++) last = await trainer.supervisedStep([tree]);
    expect(last.loss).toBeLessThan(first.loss * 0.5);
    expect(policy.version).toBe(31);
  });

  it('round-trips a checkpoint: a fresh process loads it and gives identical logits; the file is plain safetensors', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 7);
    const trainer = new EmbeddedTrainer(policy, opt);
    const dir = tmp('ckpt-');
    await trainer.save(dir);
    const here = policy.model.forward(prompt, Int32Array.from(prompt, (_, i) => i - 1), Int32Array.from(prompt, (_, i) => i)).logits;
    const script = join(dir, 'load.js');
    writeFileSync(script, `
      const { SharedPolicy, EmbeddedTrainer } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'index.js'))});
      const { cpuKernels } = require(${JSON.stringify(join(__dirname, '..', '..', 'kernels-cpu', 'dist', 'index.js'))});
      const cfg = JSON.parse(require('fs').readFileSync(process.argv[2] + '/config.json', 'utf8')).model;
      const policy = new SharedPolicy(cfg, cpuKernels(), 999);
      new EmbeddedTrainer(policy, ${JSON.stringify(opt)}).load(process.argv[2]).then(() => {
        const prompt = Int32Array.from(JSON.parse(process.argv[3]));
        const logits = policy.model.forward(prompt, prompt.map((_, i) => i - 1), prompt.map((_, i) => i)).logits;
        process.stdout.write(Buffer.from(logits.buffer).toString('base64'));
      });`);
    const r = spawnSync(process.execPath, [script, dir, JSON.stringify(Array.from(prompt))], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    // The decoded bytes may sit inside a larger pooled ArrayBuffer (Node 24 pools base64 decodes): take exactly them.
    const bytes = Buffer.from(r.stdout, 'base64');
    const there = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    expect(Array.from(there)).toEqual(Array.from(here));
    // An independent reader (Python + numpy, following the safetensors spec) sees dtypes and shapes.
    const py = spawnSync('python3', ['-c', `
import json, struct, sys, numpy as np
b = open(sys.argv[1], 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8+n])
t = h['tok_emb']; s, e = t['data_offsets']
a = np.frombuffer(b[8+n+s:8+n+e], dtype='<f4').reshape(t['shape'])
print(t['dtype'], list(a.shape), len([k for k in h if k != '__metadata__']), h['__metadata__']['format'])`, join(dir, 'model.safetensors')], { encoding: 'utf8' });
    expect(py.stdout.trim()).toBe(`F32 [${config.vocabSize}, 32] ${2 + 13 * 2 + 2 + 2} pt`);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).model).toEqual(config);
  });

  it('the value head moves valueLrScale times as far as it would at the policy\'s lr', async () => {
    const moved = async (valueLrScale: number) => {
      const policy = new SharedPolicy(config, cpuKernels(), 9);
      const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 9);
      const before = policy.model.params.get('value.b')![0]!;
      const wBefore = policy.model.params.get('tok_emb')!.slice();
      const info = { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok' as const, reward: 1 };
      const tree = buildTree([record(await sample(engine, 1, 8))], info, { messageEndId: tokenizer.special('<|im_end|>') });
      const gen = tree.nodes.filter((n) => n.kind === 'generated');
      await new EmbeddedTrainer(policy, { ...opt, valueLrScale }).step({
        trees: [tree],
        advantages: { algorithm: 'test', advantages: new Map([['a', new Map(gen.map((n) => [n.id, new Float32Array(n.tokens.length).fill(0.5)]))]]), valueTargets: new Map([['a', new Map(gen.map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))]]), metrics: {} },
        loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2, valueCoef: 0.5 }, policyLoss: clippedTisLoss,
      });
      const emb = policy.model.params.get('tok_emb')!;
      return { value: Math.abs(policy.model.params.get('value.b')![0]! - before), emb: emb.reduce((m, x, i) => Math.max(m, Math.abs(x - wBefore[i]!)), 0) };
    };
    const one = await moved(1);
    const ten = await moved(10);
    expect(ten.value / one.value).toBeCloseTo(10, 3);
    expect(ten.emb).toBeCloseTo(one.emb, 6); // the rest at the policy's lr
  });

  it('loss.epochs: several optimiser steps on one batch, each clipped against the policy that sampled it', async () => {
    const run = async (epochs: number, calls: number) => {
      const policy = new SharedPolicy(config, cpuKernels(), 10);
      const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 10);
      const info = { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok' as const, reward: 1 };
      const tree = buildTree([record(await sample(engine, 3, 16))], info, { messageEndId: tokenizer.special('<|im_end|>') });
      const gen = tree.nodes.filter((n) => n.kind === 'generated');
      const trainer = new EmbeddedTrainer(policy, { ...opt, lr: 0.05 });
      const batch = { trees: [tree], advantages: { algorithm: 'test', advantages: new Map([['a', new Map(gen.map((n) => [n.id, new Float32Array(n.tokens.length).fill(1)]))]]), metrics: {} }, loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2, epochs }, policyLoss: clippedTisLoss };
      let metrics;
      for (let i = 0; i < calls; i++) metrics = await trainer.step(batch);
      return { metrics: metrics!, version: policy.version, w: policy.model.params.get('l0.wq')!.slice() };
    };
    const twoEpochs = await run(2, 1);
    const twoSteps = await run(1, 2); // each step clips against the weights it starts from
    expect(twoEpochs.version).toBe(2);
    expect(twoSteps.version).toBe(2);
    // After a large first update most ratios are past 1 + clipHigh: the second epoch clips them.
    expect(twoEpochs.metrics.clipFraction).toBeGreaterThan(0.5);
    expect(twoSteps.metrics.clipFraction).toBe(0);
    expect(twoEpochs.w).not.toEqual(twoSteps.w);
    // Mismatch is read where the weights are the sampler's: the first epoch.
    expect(twoEpochs.metrics.mismatchAbsLogp).toBeLessThan(1e-4);
    expect(twoEpochs.metrics.epochs).toBe(2);
  });

  it('policy steps move logprobs with the advantage sign, and the value head toward the return', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 8);
    const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 8);
    const trainer = new EmbeddedTrainer(policy, { ...opt, lr: 2e-3 });
    const info = (id: string, reward: number) => ({ rolloutId: id, taskId: 't', category: 'c', harness: 'h', outcome: 'ok' as const, reward });
    const good = buildTree([{ ...record(await sample(engine, 1, 12)), rolloutId: 'good' }], info('good', 1), { messageEndId: tokenizer.special('<|im_end|>') });
    const bad = buildTree([{ ...record(await sample(engine, 2, 12)), rolloutId: 'bad' }], info('bad', 0), { messageEndId: tokenizer.special('<|im_end|>') });
    const sum = async (t: typeof good) => [...(await trainer.logprobs([t])).get(t.rolloutId)!.values()][0]!.reduce((a, b) => a + b, 0);
    const before = { good: await sum(good), bad: await sum(bad) };
    const adv = (t: typeof good, a: number) => new Map(t.nodes.filter((n) => n.kind === 'generated').map((n) => [n.id, new Float32Array(n.tokens.length).fill(a)]));
    const targets = (t: typeof good) => new Map(t.nodes.filter((n) => n.kind === 'generated').map((n) => [n.id, new Float32Array(n.tokens.length).fill(t.reward)]));
    const valueErr = async () => {
      const v = await trainer.values([good, bad]);
      return [...v.get('good')!.values()][0]!.reduce((s, x) => s + (x - 1) ** 2, 0) + [...v.get('bad')!.values()][0]!.reduce((s, x) => s + x ** 2, 0);
    };
    const errBefore = await valueErr();
    let metrics;
    for (let i = 0; i < 8; i++) {
      metrics = await trainer.step({
        trees: [good, bad],
        advantages: { algorithm: 'test', advantages: new Map([['good', adv(good, 1)], ['bad', adv(bad, -1)]]), valueTargets: new Map([['good', targets(good)], ['bad', targets(bad)]]), metrics: {} },
        loss: { clipLow: 0.2, clipHigh: 0.28, tisCap: 2, valueCoef: 0.5 }, policyLoss: clippedTisLoss,
      });
    }
    expect(await sum(good)).toBeGreaterThan(before.good);
    expect(await sum(bad)).toBeLessThan(before.bad);
    expect(await valueErr()).toBeLessThan(errBefore);
    // The first step's engine and trainer agree (same weights): no mismatch, nothing clipped.
    expect(metrics!.tokens).toBeGreaterThan(0);
  });

  it('a weights-only load starts the optimiser fresh (a model to start from); a full load resumes it; a per-step lr replaces the configured one', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 9);
    const trainer = new EmbeddedTrainer(policy, { ...opt, lr: 3e-3 });
    const reply = chatTemplate.renderReply([{ type: 'text', text: 'abc' }]);
    const tree = buildTree([record(reply.map((tokenId) => ({ tokenId, logprob: 0 })))], { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 }, { messageEndId: tokenizer.special('<|im_end|>') });
    for (let i = 0; i < 3; i++) await trainer.supervisedStep([tree]);
    const dir = tmp('ckpt-');
    await trainer.save(dir);
    const meta = () => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { step: number; policyVersion: number };
    expect(meta()).toMatchObject({ step: 3, policyVersion: 3 });
    const other = new SharedPolicy(config, cpuKernels(), 10);
    const resumed = new EmbeddedTrainer(other, opt);
    await resumed.load(dir);
    expect(other.version).toBe(3);
    const started = new EmbeddedTrainer(other, opt);
    await started.load(dir, { weightsOnly: true });
    expect(other.version).toBe(0);
    expect(Array.from(other.model.params.get('tok_emb')!)).toEqual(Array.from(policy.model.params.get('tok_emb')!));
    await started.save(dir);
    expect(meta()).toMatchObject({ step: 0, policyVersion: 0 });
    // lr 0 for this step: nothing changes.
    const before = Array.from(other.model.params.get('tok_emb')!);
    await started.supervisedStep([tree], { lr: 0 });
    expect(Array.from(other.model.params.get('tok_emb')!)).toEqual(before);
  });

  it('starts a longer-context model from a shorter one\'s checkpoint: it computes what the shorter one did, positions past the old context included', async () => {
    const short = new SharedPolicy({ ...config, context: 16 }, cpuKernels(), 12);
    const dir = tmp('ckpt-short-');
    await new EmbeddedTrainer(short, opt).save(dir);
    const long = new SharedPolicy({ ...config, context: 40 }, cpuKernels(), 13);
    await new EmbeddedTrainer(long, opt).load(dir, { weightsOnly: true });
    const T = 30;
    const tokens = Int32Array.from({ length: T }, (_, i) => 97 + ((i * 7) % 26));
    const parents = Int32Array.from({ length: T }, (_, i) => i - 1);
    const positions = Int32Array.from({ length: T }, (_, i) => i);
    const a = short.model.forward(tokens, parents, positions).logits;
    const b = long.model.forward(tokens, parents, positions).logits;
    expect(Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i]!)))).toBeLessThan(1e-5);
    // Resuming (optimiser state and all) needs the same shape.
    await expect(new EmbeddedTrainer(long, opt).load(dir)).rejects.toThrow(/does not fit this model: tensor pos_emb has 512 values, expected 1280/);
  });

  it('refuses a prompt that fills its context instead of reading the prompt\'s tail, and says how long it is and may be', async () => {
    const engine = new EmbeddedEngine(new SharedPolicy(config, cpuKernels(), 11), tokenizer, chatTemplate, 11);
    expect(engine.contextLength).toBe(config.context);
    const full = new Int32Array(config.context).fill(97);
    const drain = async () => { for await (const _ of engine.generate({ promptIds: full, sampling: { maxTokens: 8, temperature: 1, topP: 1 } })); };
    await expect(drain()).rejects.toThrow(`prompt is too long: ${config.context} tokens > ${config.context - 1} maximum`);
  });

  it('keeps a prompt that fits whole, cutting the output to the room left, so its logprobs still equal the trainer\'s', async () => {
    const policy = new SharedPolicy(config, cpuKernels(), 11);
    const engine = new EmbeddedEngine(policy, tokenizer, chatTemplate, 11);
    const long = Int32Array.from({ length: config.context - 6 }, (_, i) => 97 + (i % 26));
    const out: { tokenId: number; logprob: number }[] = [];
    for await (const t of engine.generate({ promptIds: long, sampling: { maxTokens: 64, temperature: 1, topP: 1, seed: 1, stopIds: [] } })) out.push(t);
    expect(out.length).toBe(6);
    const rec = { ...record(out), promptIds: long };
    const tree = buildTree([rec], { rolloutId: 'a', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 }, { messageEndId: tokenizer.special('<|im_end|>') });
    const recomputed = [...(await new EmbeddedTrainer(policy, opt).logprobs([tree])).get('a')!.values()][0]!;
    expect(Math.max(...out.map((t, i) => Math.abs(t.logprob - recomputed[i]!)))).toBeLessThan(1e-4);
  });
});
