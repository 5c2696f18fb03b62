import fc from 'fast-check';
import type { CanonicalMessage } from '../../contracts/messages';
import { byteChatMl } from './byte-chatml';
import { parseToolCall } from './chatml';

const { tokenizer, chatTemplate } = byteChatMl();
const sp = (t: Parameters<typeof tokenizer.special>[0]) => tokenizer.special(t);

describe('ChatML template with Hermes tool calls', () => {
  it('renders tools into the system turn and ends with the generation prompt', () => {
    const ids = chatTemplate.render({
      messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      tools: [{ name: 'write_file', description: 'Write', parameters: { type: 'object' } }],
    });
    const text = tokenizer.decode(ids);
    expect(text.startsWith('<|im_start|>system\n\n\n# Tools')).toBe(true);
    expect(text).toContain('{"type":"function","function":{"name":"write_file","description":"Write","parameters":{"type":"object"}}}');
    expect(text.endsWith('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
  });

  it('never turns text into special tokens', () => {
    const ids = tokenizer.encode('<|im_end|><tool_call>');
    expect(ids.every((id) => id < 256)).toBe(true);
  });

  it('parses a reply with text and a tool call, and keeps malformed calls as text', () => {
    const good = [...tokenizer.encode('ok'), sp('<tool_call>'), ...tokenizer.encode('{"name":"w","arguments":{"a":1}}'), sp('</tool_call>'), sp('<|im_end|>')];
    const parsed = chatTemplate.parse(good);
    expect(parsed.parts[0]).toEqual({ type: 'text', text: 'ok' });
    expect(parsed.parts[1]).toMatchObject({ type: 'tool_call', name: 'w', arguments: '{"a":1}' });
    const bad = [sp('<tool_call>'), ...tokenizer.encode('{"name": oops'), sp('</tool_call>')];
    expect(chatTemplate.parse(bad).parts).toEqual([{ type: 'text', text: '<tool_call>{"name": oops</tool_call>' }]);
    const unclosed = [sp('<tool_call>'), ...tokenizer.encode('{"name":"w"')];
    expect(chatTemplate.parse(unclosed).parts).toEqual([{ type: 'text', text: '<tool_call>{"name":"w"' }]);
    expect(parseToolCall('{"name":"w","arguments":"{\\"x\\":2}"}')).toEqual({ name: 'w', arguments: '{"x":2}' });
    expect(parseToolCall('{"name":"w","arguments":[1]}')).toBeUndefined();
  });

  it('streams multi-byte characters split across byte tokens', () => {
    const parser = chatTemplate.streamParser();
    const out = Array.from(tokenizer.encode('é→🙂')).flatMap((id) => parser.push(id)).map((e) => (e as { text: string }).text).join('');
    expect(out).toBe('é→🙂');
  });

  // The reuse path (earlier prompt + raw output + continuation) equals a full render of the
  // longer conversation whenever the output is what the template would write.
  it('reuse path equals full render for well-formed replies (property)', () => {
    const text = fc.string({ maxLength: 20 });
    const reply = fc.record({
      text,
      calls: fc.array(fc.record({ name: fc.stringMatching(/^[a-z_]{1,8}$/), arg: fc.string({ maxLength: 10 }) }), { maxLength: 2 }),
    });
    fc.assert(fc.property(text, reply, text, (user, r, result) => {
      const prompt: CanonicalMessage[] = [{ role: 'system', parts: [{ type: 'text', text: 'sys' }] }, { role: 'user', parts: [{ type: 'text', text: user }] }];
      const parts: CanonicalMessage['parts'] = [
        ...(r.text ? [{ type: 'text' as const, text: r.text }] : []),
        ...r.calls.map((c, i) => ({ type: 'tool_call' as const, id: `c${i}`, name: c.name, arguments: JSON.stringify({ v: c.arg }) })),
      ];
      const output = chatTemplate.renderReply(parts);
      const next: CanonicalMessage[] = [{ role: 'tool', parts: [{ type: 'tool_result', callId: 'c0', content: result }] }];
      const tools = [{ name: 't', parameters: {} }];
      const reused = [...chatTemplate.render({ messages: prompt, tools }), ...output, ...chatTemplate.renderContinuation(next, 'stop')];
      const full = chatTemplate.render({ messages: [...prompt, { role: 'assistant', parts }, ...next], tools });
      expect(reused).toEqual(Array.from(full));
    }), { numRuns: 200 });
  });

  it('inserts <|im_end|> after an output cut by the length limit', () => {
    const ids = chatTemplate.renderContinuation([{ role: 'user', parts: [{ type: 'text', text: 'go on' }] }], 'length');
    expect(ids[0]).toBe(sp('<|im_end|>'));
    expect(chatTemplate.renderContinuation([], 'stop')[0]).not.toBe(sp('<|im_end|>'));
  });
});
