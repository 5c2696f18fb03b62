import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { kiloHarness } from './index';

// Requests recorded from Kilo Code 7.7.7 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return kiloHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('Kilo Code call classification, from recorded requests', () => {
  it('the main agent is main, before and after a compaction', () => {
    expect(classify('kilo-7.7.7-main')).toBe('main');
    expect(classify('kilo-7.7.7-after-compaction')).toBe('main');
  });

  it('the compaction summary is compaction, though its system prompt begins as the main agent\'s', () => {
    // What makes it a trap: OpenCode's summariser has a prompt of its own; Kilo appends its
    // instructions to the main prompt, so the start alone would read as the agent.
    const main = parse('kilo-7.7.7-main').conversation;
    const summary = parse('kilo-7.7.7-compaction').conversation;
    const head = (c: typeof main) => systemText(c).slice(0, 200);
    expect(head(main)).toMatch(/^You are Kilo/);
    expect(head(summary)).toBe(head(main));
    expect(summary.tools).toEqual([]);
    expect(classify('kilo-7.7.7-compaction')).toBe('compaction');
  });

  it('the task tool\'s general subagent is subagent: the same system prompt, without task and todowrite', () => {
    const main = parse('kilo-7.7.7-main').conversation;
    const sub = parse('kilo-7.7.7-subagent').conversation;
    expect(sub.messages[0]).toEqual(main.messages[0]);
    expect(main.tools.map((t) => t.name).filter((n) => !sub.tools.some((t) => t.name === n))).toEqual(['task', 'todowrite']);
    expect(classify('kilo-7.7.7-subagent')).toBe('subagent');
  });
});
