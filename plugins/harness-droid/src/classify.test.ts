import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { droidHarness } from './index';

// Requests recorded from Factory Droid 0.215.0 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return droidHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('Factory Droid call classification, from recorded requests', () => {
  it('the main agent is main, before and after a compaction', () => {
    expect(classify('droid-0.215.0-main')).toBe('main');
    expect(classify('droid-0.215.0-after-compaction')).toBe('main');
  });

  it('the compaction summary is compaction, though its system prompt begins as the agent\'s', () => {
    const main = parse('droid-0.215.0-main').conversation;
    const summary = parse('droid-0.215.0-compaction').conversation;
    const firstSentence = (c: typeof main) => systemText(c).split('.')[0];
    expect(firstSentence(summary)).toBe(firstSentence(main));
    expect(summary.tools).toEqual([]);
    expect(classify('droid-0.215.0-compaction')).toBe('compaction');
  });

  it('a call without tools and without the summariser\'s prompt is a side call, never main', () => {
    const parsed = parse('droid-0.215.0-main');
    expect(droidHarness.classifyCall!({ ...parsed.conversation, tools: [] }, parsed.model, {})).toBe('side');
  });
});
