import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { droidHarness } from './index';

// Requests recorded from Factory Droid 0.215.0 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return droidHarness.classifyCall!(parsed.conversation, parsed.model, {});
};
const firstSentence = (name: string) => systemText(parse(name).conversation).split('.')[0];

describe('Factory Droid call classification, from recorded requests', () => {
  it('the main agent is main: first, after a subagent, after a compaction', () => {
    expect(classify('droid-0.215.0-main')).toBe('main');
    expect(classify('droid-0.215.0-after-subagent')).toBe('main');
    expect(classify('droid-0.215.0-after-compaction')).toBe('main');
  });

  it('the Task tool\'s subagent is subagent, though its system prompt begins as the agent\'s and it has tools', () => {
    const main = parse('droid-0.215.0-main').conversation;
    const sub = parse('droid-0.215.0-subagent').conversation;
    expect(firstSentence('droid-0.215.0-subagent')).toBe(firstSentence('droid-0.215.0-main'));
    expect(main.tools.map((t) => t.name).filter((n) => !sub.tools.some((t) => t.name === n))).toContain('Task');
    expect(sub.tools.length).toBeGreaterThan(0);
    expect(classify('droid-0.215.0-subagent')).toBe('subagent');
  });

  it('the compaction summary is compaction, though its system prompt begins as the agent\'s', () => {
    expect(firstSentence('droid-0.215.0-compaction')).toBe(firstSentence('droid-0.215.0-main'));
    expect(parse('droid-0.215.0-compaction').conversation.tools).toEqual([]);
    expect(classify('droid-0.215.0-compaction')).toBe('compaction');
  });

  it('a call without tools and without the summariser\'s prompt is a side call, never main', () => {
    const parsed = parse('droid-0.215.0-main');
    expect(droidHarness.classifyCall!({ ...parsed.conversation, tools: [] }, parsed.model, {})).toBe('side');
  });
});
