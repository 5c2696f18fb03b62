import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdamOptions } from '@clawgym/core';
import { UnigramTrainer } from '../unigram/unigram-trainer';
import { testModel, testModelDir } from '@clawgym/model-hf/testing';
import { createTokenIdEngine } from '@clawgym/engine-vllm';
import { engineServe } from './command';

/**
 * `clawgym engine serve --tokenizer`, driven by the SGLang client as a run drives it: prompts
 * rendered by Qwen3's own template, the scripted replies in Qwen3's ids, their logprobs under the
 * unigram weights the trainer publishes (loaded through `/update_weights_from_disk`), prompts
 * longer than `--context-length` refused as SGLang refuses them.
 */
describe('clawgym engine serve --tokenizer (the stand-in engine in a real model\'s vocabulary)', () => {
  const qwen3 = testModel('qwen3');
  let dir: string;
  let url: string;
  const stop = new AbortController();
  let served: Promise<void>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engine-serve-tok-'));
    writeFileSync(join(dir, 'replies.json'), JSON.stringify([
      { toolCalls: [{ name: 'exec', arguments: { command: 'ls' } }] },
      { text: 'Done.' },
    ]));
    let out = '';
    served = engineServe({ tokenizer: testModelDir('qwen3'), replies: 'replies.json', contextLength: '2000', port: '0' }, { out: (s) => { out += s; }, cwd: dir, signal: stop.signal });
    while (!/listening on (\S+)/.test(out)) await new Promise((r) => setTimeout(r, 20));
    url = /listening on (\S+)/.exec(out)![1]!;
  }, 60_000);

  afterAll(async () => {
    stop.abort();
    await served;
    rmSync(dir, { recursive: true, force: true });
  });

  const client = () => createTokenIdEngine({ flavor: 'sglang', baseUrl: url, model: 'Qwen/Qwen3-4B', tokenizer: qwen3.tokenizer, chatTemplate: qwen3.chatTemplate });
  const generate = async (promptIds: Int32Array) => {
    const toks = [];
    for await (const s of client().generate({ promptIds, sampling: { maxTokens: 200, temperature: 1, topP: 1, stopIds: qwen3.chatTemplate.stopIds } })) toks.push(...(Array.isArray(s) ? s : [s]));
    return toks;
  };
  const prompt = (turns: number) => {
    const messages = [{ role: 'user' as const, parts: [{ type: 'text' as const, text: 'List the files.' }] }];
    for (let i = 0; i < turns; i++) messages.push({ role: 'assistant' as never, parts: [{ type: 'text' as const, text: `turn ${i}` }] }, { role: 'user' as const, parts: [{ type: 'text' as const, text: 'go on' }] });
    return qwen3.chatTemplate.render({ messages, tools: [] } as never);
  };

  it('answers turn N of a conversation with reply N, in Qwen3\'s ids, each token at the uniform policy\'s logprob', async () => {
    const first = await generate(prompt(0));
    expect(qwen3.tokenizer.decode(first.map((t) => t.tokenId))).toBe('<think>\n\n</think>\n\n<tool_call>\n{"name": "exec", "arguments": {"command": "ls"}}\n</tool_call><|im_end|>');
    for (const t of first) expect(t.logprob).toBeCloseTo(-Math.log(qwen3.tokenizer.vocabSize), 4);
    const second = await generate(prompt(1));
    expect(qwen3.tokenizer.decode(second.map((t) => t.tokenId))).toContain('Done.<|im_end|>');
  });

  it('loads the unigram trainer\'s published weights through the SGLang weight route: the logprobs are the trainer\'s', async () => {
    const trainer = new UnigramTrainer(qwen3.tokenizer.vocabSize, AdamOptions.parse({}));
    const reply = (await generate(prompt(1))).map((t) => t.tokenId);
    const datum = { modelInput: Int32Array.from(reply.map(() => 0)), targetTokens: Int32Array.from(reply), weights: new Float32Array(reply.length).fill(1) };
    await trainer.datums.forwardBackward([datum], 'cross_entropy');
    await trainer.datums.optimStep({ learningRate: 0.05, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0 });
    const weights = join(dir, 'step-1');
    await trainer.save(weights);
    const engine = client();
    await engine.syncWeights!({ path: weights, version: 1, kind: 'full' });
    const after = await generate(prompt(1));
    const expected = (await trainer.datums.forward([datum])).logprobs[0]!;
    expect(after.map((t) => Math.fround(t.logprob))).toEqual(Array.from(expected));
    expect(after[0]!.logprob).toBeGreaterThan(-Math.log(qwen3.tokenizer.vocabSize) + 0.05);
  });

  it('refuses a prompt longer than its --context-length, a folder of another vocabulary, and replies that are not turns', async () => {
    const long = Int32Array.from({ length: 2500 }, () => qwen3.tokenizer.encode('a')[0]!);
    await expect(generate(long)).rejects.toThrow(/2500|context/);
    const other = join(dir, 'other');
    await new UnigramTrainer(1000, AdamOptions.parse({})).save(other);
    await expect(client().syncWeights!({ path: other, version: 2, kind: 'full' })).rejects.toThrow(/vocabulary of 1000 tokens/);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ tool: 'x' }]));
    await expect(engineServe({ tokenizer: testModelDir('qwen3'), replies: 'bad.json', port: '0' }, { out: () => {}, cwd: dir })).rejects.toThrow(/--replies bad.json is not an array of turns/);
  });
});
