import { byteChatMl, eachToken, trainerOptions } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import gpujs from '@clawgym/kernels-gpujs';
import embedded from './index';

const options = (kernels: string) => ({ model: { dModel: 16, layers: 1, heads: 2, context: 64 }, kernels });

describe('engine-embedded plugin', () => {
  it('provides an engine and a trainer sharing one policy, on the kernels the config picks', async () => {
    const kernel = await createTestKernel({ plugins: [embedded(), gpujs()] });
    for (const k of ['cpu', 'gpujs']) {
      const ctx = { runDir: `/tmp/plugin-test-${k}`, seed: 1 };
      const engine = await kernel.registry.get('engine', 'embedded').create(options(k), ctx);
      const trainer = await kernel.registry.get('trainer', 'embedded').create(options(k), ctx);
      const prompt = Int32Array.from(byteChatMl().tokenizer.encode('hi'));
      const out: number[] = [];
      for await (const t of eachToken(engine.generate({ promptIds: prompt, sampling: { maxTokens: 5, temperature: 1, topP: 1, seed: 3, stopIds: [] } }))) out.push(t.tokenId);
      expect(out.length).toBeGreaterThan(0);
      expect(engine.policyVersion()).toBe(trainer.policyVersion());
      expect(engine.chatTemplate.name).toBe('compact');
    }
  });

  it('says which kernels exist when the config names an unknown one', async () => {
    const kernel = await createTestKernel({ plugins: [embedded()] });
    await expect(kernel.registry.get('engine', 'embedded').create(options('fpga'), { runDir: '/tmp/x-fpga', seed: 1 })).rejects.toThrow(/no kernels named "fpga"/);
  });

  it('the trainer shares the engine\'s options when it names the same provider without its own; different options are refused', async () => {
    const engine = { use: 'embedded', options: options('cpu') };
    expect(trainerOptions({ engine, trainer: 'embedded' })).toEqual(options('cpu'));
    expect(trainerOptions({ engine, trainer: { use: 'embedded', options: { kernels: 'gpujs' } } })).toEqual({ kernels: 'gpujs' });
    expect(trainerOptions({ engine: 'vllm', trainer: 'embedded' })).toEqual({});
    const kernel = await createTestKernel({ plugins: [embedded()] });
    const ctx = { runDir: '/tmp/x-shared', seed: 1 };
    await kernel.registry.get('engine', 'embedded').create(options('cpu'), ctx);
    await expect(kernel.registry.get('trainer', 'embedded').create({}, ctx)).rejects.toThrow(/share their weights, but were given different options/);
    await expect(kernel.registry.get('trainer', 'embedded').create(options('cpu'), ctx)).resolves.toBeDefined();
  });
});
