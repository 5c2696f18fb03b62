import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { openCodeHarness } from './index';

// Requests recorded from OpenCode 1.18.33 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return openCodeHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('OpenCode call classification, from recorded requests', () => {
  it('the main agent is main, before and after a compaction', () => {
    expect(classify('opencode-1.18.33-main')).toBe('main');
    expect(classify('opencode-1.18.33-after-compaction')).toBe('main');
  });

  it('the session title and the compaction summary are side calls of their kind', () => {
    expect(classify('opencode-1.18.33-title')).toBe('title');
    expect(classify('opencode-1.18.33-compaction')).toBe('compaction');
  });

  it('the task tool\'s general subagent is subagent, though its system prompt is the main agent\'s', () => {
    // What makes it a trap: the same system prompt, and tools; only `task` and `todowrite` are gone.
    const main = parse('opencode-1.18.33-main').conversation;
    const sub = parse('opencode-1.18.33-subagent').conversation;
    expect(sub.messages[0]).toEqual(main.messages[0]);
    expect(main.tools.map((t) => t.name).filter((n) => !sub.tools.some((t) => t.name === n))).toEqual(['task', 'todowrite']);
    expect(classify('opencode-1.18.33-subagent')).toBe('subagent');
  });
});
