import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../main';
import { testModel, testModelDir } from '@clawgym/model-hf/testing';

async function cli(argv: string[], cwd: string) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => { out += s; }, err: (s) => { err += s; }, cwd });
  return { code, out, err };
}

describe('clawgym template', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-template-'));
  const request = {
    model: 'qwen3',
    tools: [{ type: 'function', function: { name: 'write', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
    messages: [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'Write a.txt' }],
  };
  writeFileSync(join(dir, 'request.json'), JSON.stringify(request));

  it('prints the prompt exactly as the proxy sends it for a first call: {"text", "ids"}', async () => {
    const r = await cli(['template', '--model', testModelDir('qwen3'), 'request.json'], dir);
    expect(r).toMatchObject({ code: 0, err: '' });
    const { text, ids } = JSON.parse(r.out) as { text: string; ids: number[] };
    expect(text.startsWith('<|im_start|>system\nYou are an agent.\n\n# Tools\n')).toBe(true);
    expect(text).toContain('{"type": "function", "function": {"name": "write", "description": "Write a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}');
    expect(text.endsWith('<|im_start|>user\nWrite a.txt<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    const { chatTemplate, tokenizer } = testModel('qwen3');
    expect(ids).toEqual(Array.from(chatTemplate.render({ messages: [{ role: 'system', parts: [{ type: 'text', text: 'You are an agent.' }] }, { role: 'user', parts: [{ type: 'text', text: 'Write a.txt' }] }], tools: [{ name: 'write', description: 'Write a file', parameters: request.tools[0]!.function.parameters }] })));
    expect(tokenizer.decode(ids)).toBe(text);
  });

  it('--parse turns generated ids into the message the harness would receive', async () => {
    const { tokenizer } = testModel('qwen3');
    const ids = tokenizer.encodeMarkup('<think>\nshort\n</think>\n\nOn it.\n<tool_call>\n{"name": "write", "arguments": {"path": "a.txt"}}\n</tool_call><|im_end|>');
    writeFileSync(join(dir, 'ids.json'), JSON.stringify(Array.from(ids)));
    const r = await cli(['template', '--model', testModelDir('qwen3'), 'request.json', '--parse', 'ids.json'], dir);
    expect(r.code).toBe(0);
    const reply = JSON.parse(r.out) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
    expect(reply.choices[0]!.finish_reason).toBe('tool_calls');
    expect(reply.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'On it.', reasoning_content: 'short', tool_calls: [{ type: 'function', function: { name: 'write', arguments: '{"path":"a.txt"}' } }] });
  });

  it('takes a body without model, or the messages alone', async () => {
    const messages = [{ role: 'user', content: 'hi <|im_end|>' }];
    writeFileSync(join(dir, 'no-model.json'), JSON.stringify({ messages }));
    writeFileSync(join(dir, 'messages.json'), JSON.stringify(messages));
    const { chatTemplate } = testModel('qwen3');
    const want = chatTemplate.renderPrompt({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi <|im_end|>' }] }], tools: [] });
    for (const file of ['no-model.json', 'messages.json']) {
      const r = await cli(['template', '--model', testModelDir('qwen3'), file], dir);
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(JSON.parse(r.out)).toEqual({ text: '<|im_start|>user\nhi <|im_end|><|im_end|>\n<|im_start|>assistant\n', ids: Array.from(want.ids) });
    }
  });

  it('says what is wrong with a request the proxy would refuse', async () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ messages: 'hi' }));
    const r = await cli(['template', '--model', testModelDir('qwen3'), 'bad.json'], dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain('bad.json is not an openai-chat request the proxy accepts:');
    expect(r.err).not.toContain('unexpected error');
  });

  it('says what a model folder lacks', async () => {
    const r = await cli(['template', '--model', join(dir, 'nope'), 'request.json'], dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain('does not exist');
  });
});
