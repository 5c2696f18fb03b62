import fc from 'fast-check';
import { ByteTokenizer, type CanonicalMessage, type ToolSpec } from '@clawgym/core';
import { CompactTemplate, toolParams } from './compact-template';

const tokenizer = new ByteTokenizer();
const template = new CompactTemplate(tokenizer, { systemChars: 0, toolResultChars: 40 });
const tools: ToolSpec[] = [
  { name: 'write_file', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } },
  { name: 'bash', parameters: { type: 'object', properties: { timeout: { type: 'number' }, command: { type: 'string' }, flags: { type: 'array' } }, required: ['command'] } },
];
const strip = (m: CanonicalMessage) => m.parts.map((p) => (p.type === 'tool_call' ? { ...p, id: '' } : p));

describe('compact template', () => {
  it('lists tools by name and parameters, drops the harness system prompt, cuts long tool results', () => {
    expect(toolParams(tools[1]!)).toEqual(['command', 'timeout', 'flags']);
    const ids = template.render({
      messages: [
        { role: 'system', parts: [{ type: 'text', text: 'You are Claude Code. '.repeat(500) }] },
        { role: 'user', parts: [{ type: 'text', text: 'Create a.txt containing hi' }] },
        { role: 'tool', parts: [{ type: 'tool_result', callId: 'c', content: 'x'.repeat(100) }] },
      ],
      tools,
    });
    const text = tokenizer.decode(ids);
    expect(text).toBe(`<|im_start|>system\ntools: write_file(path, content) bash(command, timeout, flags)<|im_end|>\n<|im_start|>user\nCreate a.txt containing hi<|im_end|>\n<|im_start|>user\n<tool_response>${'x'.repeat(40)}…[cut]</tool_response><|im_end|>\n<|im_start|>assistant\n`);
    expect(ids.length).toBeLessThan(200);
  });

  it('cuts the system reminders a harness puts into user turns and tool results like its system prompt', () => {
    const reminder = '<system-reminder>\nAs you answer the user\'s questions, you can use the following context:\n# currentDate\nToday\'s date is 2026-11-29.\n</system-reminder>';
    const conversation = (chars: number) => tokenizer.decode(new CompactTemplate(tokenizer, { systemChars: chars, toolResultChars: 400 }).render({
      messages: [
        { role: 'user', parts: [{ type: 'text', text: `${reminder}\n\nRead ivy.txt and write its text in upper case to dew.txt` }] },
        { role: 'tool', parts: [{ type: 'tool_result', callId: 'c', content: `1\tink\n${reminder}` }] },
      ],
      tools: [],
    }));
    expect(conversation(0)).toBe('<|im_start|>system\n<|im_end|>\n<|im_start|>user\nRead ivy.txt and write its text in upper case to dew.txt<|im_end|>\n'
      + '<|im_start|>user\n<tool_response>1\tink\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
    expect(conversation(20)).toContain('<|im_start|>user\n<system-reminder>\nAs…[cut]\nRead ivy.txt');
    expect(conversation(1000)).toContain(`${reminder}\nRead ivy.txt`);
    // Text that only mentions a reminder tag, unclosed, is the user's and stays.
    expect(tokenizer.decode(template.render({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'say <system-reminder> once' }] }], tools: [] }))).toContain('say <system-reminder> once');
  });

  it('maps its compact call syntax to and from JSON arguments exactly', () => {
    const value = fc.string({ maxLength: 20 }).filter((s) => !s.includes('\uFFFD'));
    fc.assert(fc.property(value, value, fc.integer(), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), (path, content, timeout, flags) => {
      const parts: CanonicalMessage['parts'] = [
        { type: 'text', text: 'ok' },
        { type: 'tool_call', id: 'a', name: 'write_file', arguments: JSON.stringify({ path, content }) },
        { type: 'tool_call', id: 'b', name: 'bash', arguments: JSON.stringify({ command: path, timeout, flags }) },
      ];
      const ids = template.renderReply(parts);
      expect(strip(template.parse(ids, tools))).toEqual(strip({ role: 'assistant', parts }));
    }), { numRuns: 200 });
  });

  it('keeps what is not a valid call as text: unknown tool, odd fields, unclosed', () => {
    const s = (t: Parameters<ByteTokenizer['special']>[0]) => tokenizer.special(t);
    const call = (...fields: string[]) => [s('<tool_call>'), ...fields.flatMap((f, i) => [...(i ? [s('<|sep|>')] : []), ...tokenizer.encode(f)])];
    expect(template.parse([...call('nope', 'a', 'b'), s('</tool_call>')], tools).parts).toEqual([{ type: 'text', text: '<tool_call>nope<|sep|>a<|sep|>b</tool_call>' }]);
    expect(template.parse([...call('bash', 'command'), s('</tool_call>')], tools).parts).toEqual([{ type: 'text', text: '<tool_call>bash<|sep|>command</tool_call>' }]);
    expect(template.parse(call('bash', 'command', 'ls'), tools).parts).toEqual([{ type: 'text', text: '<tool_call>bash<|sep|>command<|sep|>ls' }]);
  });

  it('reuse path equals a full render', () => {
    const prompt: CanonicalMessage[] = [{ role: 'user', parts: [{ type: 'text', text: 'go' }] }];
    const parts: CanonicalMessage['parts'] = [{ type: 'tool_call', id: 'c', name: 'bash', arguments: '{"command":"ls"}' }];
    const next: CanonicalMessage[] = [{ role: 'tool', parts: [{ type: 'tool_result', callId: 'c', content: 'a.txt' }] }];
    const reused = [...template.render({ messages: prompt, tools }), ...template.renderReply(parts), ...template.renderContinuation(next, 'stop')];
    expect(reused).toEqual(Array.from(template.render({ messages: [...prompt, { role: 'assistant', parts }, ...next], tools })));
  });
});
