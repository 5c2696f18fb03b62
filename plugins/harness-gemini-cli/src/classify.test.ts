import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { geminiCliHarness } from './index';

// Requests recorded from Gemini CLI 0.61.0 (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('gemini-generate-content', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return geminiCliHarness.classifyCall!(parsed.conversation, parsed.model, parsed.responseSchema ? { responseSchema: parsed.responseSchema } : {});
};

describe('Gemini CLI call classification, from recorded requests', () => {
  it('the main agent is main, at its first call and after a tool', () => {
    expect(classify('gemini-cli-0.61.0-main')).toBe('main');
    expect(classify('gemini-cli-0.61.0-call2')).toBe('main');
  });

  it('an invoke_agent subagent is subagent: its own prompt and tools, complete_task among them', () => {
    const main = parse('gemini-cli-0.61.0-main').conversation;
    const sub = parse('gemini-cli-0.61.0-subagent').conversation;
    // What makes it a trap: it opens like the main agent's prompt and offers most of its tools.
    expect(sub.messages[0]!.parts[0]).toMatchObject({ text: expect.stringMatching(/^You are Gemini CLI/) });
    expect(main.messages[0]!.parts[0]).toMatchObject({ text: expect.stringMatching(/^You are Gemini CLI/) });
    expect(sub.tools.map((t) => t.name)).toContain('complete_task');
    expect(main.tools.map((t) => t.name)).not.toContain('complete_task');
    expect(classify('gemini-cli-0.61.0-subagent')).toBe('subagent');
  });

  it('the model router (run without -m) is a side call, not the title the JSON-schema default would make it', () => {
    expect(parse('gemini-cli-0.61.0-router').responseSchema).toBeDefined();
    expect(classify('gemini-cli-0.61.0-router')).toBe('side');
  });
});
