import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { copilotHarness } from './index';

// Requests recorded from GitHub Copilot CLI 1.0.102 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return copilotHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('GitHub Copilot CLI call classification, from recorded requests', () => {
  it('the main agent is main: first, after a subagent, after a compaction', () => {
    expect(classify('copilot-1.0.102-main')).toBe('main');
    expect(classify('copilot-1.0.102-after-subagent')).toBe('main');
    expect(classify('copilot-1.0.102-after-compaction')).toBe('main');
  });

  it('the task tool\'s subagent is subagent: the very same tools, a prompt of its own', () => {
    const main = parse('copilot-1.0.102-main').conversation;
    const sub = parse('copilot-1.0.102-subagent').conversation;
    expect(sub.tools.map((t) => t.name)).toEqual(main.tools.map((t) => t.name));
    expect(systemText(sub)).toMatch(/^As a sub-agent/);
    expect(classify('copilot-1.0.102-subagent')).toBe('subagent');
  });

  it('the compaction is compaction: the main prompt and tools, the summary request appended, tool_choice none', () => {
    const main = parse('copilot-1.0.102-main').conversation;
    const summary = parse('copilot-1.0.102-compaction');
    expect(systemText(summary.conversation).slice(0, 500)).toBe(systemText(main).slice(0, 500));
    expect(summary.conversation.tools.length).toBe(main.tools.length);
    expect((recordedRequest('copilot-1.0.102-compaction').body as { tool_choice?: string }).tool_choice).toBe('none');
    expect(classify('copilot-1.0.102-compaction')).toBe('compaction');
  });

  it('a call without tools and without either sign is a side call, never main', () => {
    const parsed = parse('copilot-1.0.102-main');
    expect(copilotHarness.classifyCall!({ ...parsed.conversation, tools: [] }, parsed.model, {})).toBe('side');
  });
});
