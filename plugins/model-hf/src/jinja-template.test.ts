import { provider, type CanonicalMessage, type MessagePart } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import { testModel, testModelDir } from './testing/test-models';
import type { ContinuationMemo } from './jinja-template';

const t = (text: string): MessagePart => ({ type: 'text', text });
const tools = [{ name: 'run', description: 'Run a shell command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }];

/** Walk a conversation the way the proxy does: prompt, the model's raw reply ids, the continuation. */
function walk(name: 'qwen3' | 'deepseek_v3' | 'llama3_1' | 'gemma3', turns: { reply: MessagePart[]; next: CanonicalMessage[] }[], first: CanonicalMessage[], withTools: boolean) {
  const { chatTemplate } = testModel(name);
  const ts = withTools ? tools : [];
  let messages = [...first];
  let ids = Array.from(chatTemplate.render({ messages, tools: ts }));
  const drifts: string[] = [];
  const memo: { whole?: boolean } = {};
  for (const { reply, next } of turns) {
    const replyMsg: CanonicalMessage = { role: 'assistant', parts: reply };
    const out = chatTemplate.renderReply(reply, ts);
    const c = chatTemplate.continueFrom({ messages, reply: replyMsg, tools: ts, outputIds: out, finishReason: 'stop' }, next, memo);
    ids = [...ids, ...out, ...c.ids];
    drifts.push(c.drift.class);
    messages = [...messages, replyMsg, ...next];
  }
  // The small window answered every call (it never disagreed with a full render).
  expect(memo.whole).toBeUndefined();
  return { ids, full: Array.from(chatTemplate.render({ messages, tools: ts })), drifts };
}

describe('incremental continuation', () => {
  it('equals the full render for a Qwen3 tool loop (clean at every call)', () => {
    const turns = Array.from({ length: 6 }, (_, i) => ({
      reply: [{ type: 'thinking' as const, text: `step ${i}` }, t(i % 2 ? `Running ${i}.` : ''), { type: 'tool_call' as const, id: `c${i}`, name: 'run', arguments: JSON.stringify({ cmd: `echo ${i} 你好` }) }],
      next: [{ role: 'tool' as const, parts: [{ type: 'tool_result' as const, callId: `c${i}`, content: `${i}\n<|im_end|> look-alike` }] }],
    }));
    const { ids, full, drifts } = walk('qwen3', turns, [{ role: 'system', parts: [t('You are an agent.')] }, { role: 'user', parts: [t('go')] }], true);
    expect(drifts).toEqual(Array(6).fill('clean'));
    expect(ids).toEqual(full);
  });

  it('equals the full render for Llama 3.1 and Gemma 3 chats', () => {
    for (const name of ['llama3_1', 'gemma3'] as const) {
      const turns = [0, 1, 2].map((i) => ({ reply: [t(`answer ${i}`)], next: [{ role: 'user' as const, parts: [t(`question ${i + 1} ✓`)] }] }));
      const { ids, full, drifts } = walk(name, turns, [{ role: 'system', parts: [t('Be brief.')] }, { role: 'user', parts: [t('question 0')] }], false);
      expect([name, drifts]).toEqual([name, ['clean', 'clean', 'clean']]);
      expect(ids).toEqual(full);
    }
  });

  it('says realigned when a template writes a reply differently than the model did (DeepSeek-V3 drops tool calls from history)', () => {
    const { chatTemplate, tokenizer } = testModel('deepseek_v3');
    // The model's call as DeepSeek-V3 writes it (its template's tool-call markup, hand-built).
    const out = Array.from(tokenizer.encodeMarkup('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>run\n```json\n{"cmd": "ls"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'));
    const reply = chatTemplate.parse(out, tools);
    expect(reply.parts).toMatchObject([{ type: 'tool_call', name: 'run', arguments: '{"cmd":"ls"}' }]);
    const c = chatTemplate.continueFrom({ messages: [{ role: 'user', parts: [t('list')] }], reply, tools, outputIds: out, finishReason: 'stop' }, [{ role: 'tool', parts: [{ type: 'tool_result', callId: 'x', content: 'a.txt' }] }]);
    // vLLM hands the template content "" for a reply that is only tool calls; this template then writes no calls.
    expect(c.drift.class).toBe('realigned');
    expect(c.drift.reason).toMatch(/the template re-renders the reply/);
  });

  it('gives the same ids with the window and the tool turn prepared after each answer (primeContinuation), rendering nothing per call', () => {
    const { chatTemplate } = testModel('qwen3');
    const template = chatTemplate as unknown as { renderRaw: (...a: unknown[]) => unknown };
    const run = (prime: boolean) => {
      const memo: { whole?: boolean; checkedAt?: number } = {};
      let messages: CanonicalMessage[] = [{ role: 'system', parts: [t('You are an agent.')] }, { role: 'user', parts: [t('go')] }];
      const out: { ids: number[]; drift: string; renders: number }[] = [];
      for (let i = 0; i < 10; i++) {
        const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'thinking', text: `step ${i}` }, { type: 'tool_call', id: `c${i}`, name: 'run', arguments: JSON.stringify({ cmd: `ls ${i}` }) }] };
        const next: CanonicalMessage[] = [{ role: 'tool', parts: [{ type: 'tool_result', callId: `c${i}`, content: `file${i}\n`.repeat(i + 1) }] }];
        const outputIds = chatTemplate.renderReply(reply.parts, tools);
        if (prime) chatTemplate.primeContinuation!({ messages, reply, tools, outputIds, finishReason: 'stop' }, memo);
        const spy = jest.spyOn(template, 'renderRaw');
        const c = chatTemplate.continueFrom!({ messages, reply, tools, outputIds, finishReason: 'stop' }, next, memo);
        out.push({ ids: Array.from(c.ids), drift: c.drift.class, renders: spy.mock.calls.length });
        spy.mockRestore();
        messages = [...messages, reply, ...next];
      }
      expect(memo.whole).toBeUndefined();
      return out;
    };
    const plain = run(false);
    const primed = run(true);
    expect(primed.map(({ ids, drift }) => ({ ids, drift }))).toEqual(plain.map(({ ids, drift }) => ({ ids, drift })));
    // Calls 0, 2 and 6 (history 2, 6 and 14 messages) are checked against the full render (three
    // renders); the others render nothing: the window's render and the tool result's turn, with
    // its text opaque, were made before, and only the text is filled in. Without priming, call 8
    // renders its window anew (the last call's has grown past 16 messages) as well as its turn.
    expect(primed.map((c) => c.renders)).toEqual([3, 0, 3, 0, 0, 0, 3, 0, 0, 0]);
    expect(plain[8]!.renders).toBe(2);
  });

  // The foreseen turn (primeContinuation renders the tool results' turn before they come, their
  // texts opaque) must give what rendering them does, for every text: these are the texts a
  // template could treat unlike a plain string, and the ones the neutralizer rewrites.
  const TEXTS = ['', ' ', '\n', '\n\n  lead and trail  \n', '<|im_end|>', '<|im_start|>assistant\n', 'abc<|im_', '<tool_response>x</tool_response>',
    '</tool_response>', '<think>no</think>', '\uE000', '\uE0000\uE001', 'a\uE001b', '{{ x }} {% if %}', '"q" \\ \t', '🙂 中文 naïve', 'x'.repeat(700), `${'-rw-r--r-- 1 root root 120 f.txt\n'.repeat(8)}`];

  it.each(['qwen3', 'deepseek_v3'] as const)('%s: a foreseen tool turn gives the ids and drift a render of it gives, for every text and one to three calls', (name) => {
    const { chatTemplate } = testModel(name);
    const template = chatTemplate as unknown as { fillIn: (...a: unknown[]) => unknown };
    const fill = jest.spyOn(template, 'fillIn');
    let foreseen = 0;
    for (let calls = 1; calls <= 3; calls++) {
      for (const [k, text] of TEXTS.entries()) {
        const memo: ContinuationMemo = {};
        const messages: CanonicalMessage[] = [{ role: 'system', parts: [t('You are an agent.')] }, { role: 'user', parts: [t(`task ${k}`)] }];
        const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'thinking', text: 'look' }, ...Array.from({ length: calls }, (_, i) => ({ type: 'tool_call' as const, id: `c${i}${text.slice(0, 3)}`, name: 'run', arguments: JSON.stringify({ cmd: `ls ${i}` }) }))] };
        const next: CanonicalMessage[] = [{ role: 'tool', parts: Array.from({ length: calls }, (_, i) => ({ type: 'tool_result' as const, callId: i === 1 ? text : `c${i}`, content: i === 0 ? text : `${text}${i}` })) }];
        const history = { messages, reply, tools, outputIds: chatTemplate.renderReply(reply.parts, tools), finishReason: 'stop' as const };
        const rendered = chatTemplate.continueFrom!(history, next, { checkedAt: 64 });
        chatTemplate.primeContinuation!(history, memo);
        expect(memo.primed?.foreseen).toBeDefined();
        fill.mockClear();
        const c = chatTemplate.continueFrom!(history, next, { ...memo, checkedAt: 64 });
        expect(fill).toHaveReturnedWith(expect.objectContaining({ ids: expect.anything() }));
        foreseen++;
        expect({ ids: Array.from(c.ids), drift: c.drift }).toEqual({ ids: Array.from(rendered.ids), drift: rendered.drift });
      }
    }
    fill.mockRestore();
    expect(foreseen).toBe(3 * TEXTS.length);
  });

  it('renders the turn when the new messages are not the shape foreseen (a user message, fewer results, a result with text around it)', () => {
    const { chatTemplate } = testModel('qwen3');
    const messages: CanonicalMessage[] = [{ role: 'user', parts: [t('go')] }];
    const reply: CanonicalMessage = { role: 'assistant', parts: [{ type: 'tool_call', id: 'a', name: 'run', arguments: '{}' }, { type: 'tool_call', id: 'b', name: 'run', arguments: '{}' }] };
    const history = { messages, reply, tools, outputIds: chatTemplate.renderReply(reply.parts, tools), finishReason: 'stop' as const };
    const nexts: CanonicalMessage[][] = [
      [{ role: 'user', parts: [t('stop that')] }],
      [{ role: 'tool', parts: [{ type: 'tool_result', callId: 'a', content: 'only one' }] }],
      [{ role: 'tool', parts: [{ type: 'tool_result', callId: 'a', content: 'x' }, { type: 'tool_result', callId: 'b', content: 'y' }, { type: 'text', text: 'and a note' }] }],
    ];
    for (const next of nexts) {
      const memo = {};
      const rendered = chatTemplate.continueFrom!(history, next, { checkedAt: 64 });
      chatTemplate.primeContinuation!(history, memo);
      const spy = jest.spyOn(chatTemplate as unknown as { renderRaw: (...a: unknown[]) => unknown }, 'renderRaw');
      const c = chatTemplate.continueFrom!(history, next, { ...memo, checkedAt: 64 });
      expect(spy).toHaveBeenCalled();
      spy.mockRestore();
      expect(Array.from(c.ids)).toEqual(Array.from(rendered.ids));
    }
  });

  it('inserts the stop token after a reply cut by the length limit', () => {
    const { chatTemplate, tokenizer } = testModel('qwen3');
    const c = chatTemplate.continueFrom({ messages: [{ role: 'user', parts: [t('hi')] }], reply: { role: 'assistant', parts: [t('cut')] }, tools: [], outputIds: Array.from(tokenizer.encode('cut')), finishReason: 'length' }, [{ role: 'user', parts: [t('go on')] }]);
    expect(c.ids[0]).toBe(151645);
    expect(tokenizer.decode(c.ids)).toBe('<|im_end|>\n<|im_start|>user\ngo on<|im_end|>\n<|im_start|>assistant\n');
  });
});

describe('engine: vllm / sglang', () => {
  it('refuses a token-id engine without a tokenizer folder, saying what to pass', async () => {
    const kernel = await createTestKernel();
    for (const flavor of ['vllm', 'sglang']) {
      const p = await provider(kernel, 'engine', flavor);
      await expect(p.create({ baseUrl: 'http://127.0.0.1:8000', model: 'Qwen/Qwen3-8B' }, { runDir: '', seed: 1 }))
        .rejects.toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining(`engine "${flavor}" needs engine.options.tokenizer`), hint: expect.stringContaining('tokenizer:') });
    }
    const bad = await provider(kernel, 'engine', 'vllm');
    await expect(bad.create({ baseUrl: 'http://127.0.0.1:8000', model: 'm', tokenizer: '/nonexistent/model' }, { runDir: '', seed: 1 }))
      .rejects.toMatchObject({ code: 'CLAWGYM_MODEL_FOLDER', message: expect.stringContaining('does not exist') });
  });

  it('loads the folder\'s tokenizer and template', async () => {
    const kernel = await createTestKernel();
    const engine = await (await provider(kernel, 'engine', 'vllm')).create({ baseUrl: 'http://127.0.0.1:8000', model: 'Qwen/Qwen3-8B', tokenizer: testModelDir('qwen3') }, { runDir: '', seed: 1 });
    expect(engine.chatTemplate.name).toBe('jinja:hermes');
    expect(engine.chatTemplate.stopIds).toEqual([151645]);
    expect(engine.tokenizer.decode(engine.chatTemplate.render({ tools: [], messages: [{ role: 'user', parts: [t('hi')] }] }))).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
  });
});
