import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedProxy } from '../../testing';
import { testModel, testModelDir } from '@clawgym/model-hf/testing';
import { main } from '../main';

// A run whose calls went through Qwen3's tokenizer and template: inspect must read its ids with
// Qwen3's tokenizer (byte-level decoding of Qwen3 ids is unreadable).
describe('clawgym inspect --rollout reads the ids with the run\'s own tokenizer', () => {
  let runDir: string;
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'clawgym-inspect-'));
    const p = await startScriptedProxy(({ callIndex }) => ({ text: `Done with step ${callIndex}, café 你好.` }), { runDir, template: testModel('qwen3') });
    try {
      const s = p.proxy.openSession('q-1');
      const post = (messages: unknown[]) => fetch(`${s.baseUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', max_tokens: 64, messages }) });
      const first = [{ role: 'user', content: 'Please write notes.txt' }];
      expect((await post(first)).status).toBe(200);
      expect((await post([...first, { role: 'assistant', content: 'Done with step 0, café 你好.' }, { role: 'user', content: 'And summary.txt' }])).status).toBe(200);
      await p.proxy.closeSession('q-1');
    } finally {
      await p.close();
    }
  });
  afterAll(() => rmSync(runDir, { recursive: true, force: true }));

  const inspect = async (...args: string[]) => {
    let out = '';
    const io = { out: (t: string) => { out += t; }, err: (t: string) => { out += t; }, cwd: runDir };
    const code = await main(['inspect', runDir, '--rollout', 'q-1', ...args], io);
    return { code, out };
  };

  it('takes the model folder from the run\'s frozen config', async () => {
    writeFileSync(join(runDir, 'config.json'), JSON.stringify({ rootDir: '/', engine: { use: 'vllm', options: { tokenizer: testModelDir('qwen3') } } }));
    const { code, out } = await inspect();
    expect(code).toBe(0);
    expect(out).toContain(`text read with ${testModelDir('qwen3')}`);
    expect(out).toContain('Please write notes.txt');
    expect(out).toContain('And summary.txt');
    expect(out).toContain('café 你好');
  });

  it('--tokenizer names the folder; without either it falls back to byte-level and says so', async () => {
    rmSync(join(runDir, 'config.json'), { force: true });
    const named = await inspect('--tokenizer', testModelDir('qwen3'));
    expect(named.code).toBe(0);
    expect(named.out).toContain('Please write notes.txt');
    const fallback = await inspect();
    expect(fallback.code).toBe(0);
    expect(fallback.out).toContain('text read with byte-level ChatML');
    expect(fallback.out).not.toContain('Please write notes.txt'); // Qwen3 ids are not bytes
  });

  it('a folder that is not a model is a usage error naming it, not a stack trace', async () => {
    const { code, out } = await inspect('--tokenizer', runDir);
    expect(code).not.toBe(0);
    expect(out).toContain(runDir);
    expect(out).not.toMatch(/\n\s+at /);
  });
});
