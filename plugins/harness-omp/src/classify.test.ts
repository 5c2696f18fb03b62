import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { ompHarness } from './index';

// Requests recorded from oh-my-pi 18.2.3 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return ompHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('oh-my-pi call classification, from recorded requests', () => {
  it('the main agent is main, before and after a subagent, and after a compaction', () => {
    expect(classify('omp-18.2.3-main')).toBe('main');
    expect(classify('omp-18.2.3-after-subagent')).toBe('main');
    expect(classify('omp-18.2.3-after-compaction')).toBe('main');
  });

  it('the handoff request is compaction, though it is the agent\'s own request with one more user message', () => {
    // What makes it a trap: the same system prompt and tools as the agent's; only the appended message tells it.
    const main = parse('omp-18.2.3-main').conversation;
    const handoff = parse('omp-18.2.3-compaction').conversation;
    expect(systemText(handoff)).toBe(systemText(main));
    expect(handoff.tools.map((t) => t.name)).toEqual(main.tools.map((t) => t.name));
    expect(handoff.messages[handoff.messages.length - 1]!.role).toBe('user');
    expect(classify('omp-18.2.3-compaction')).toBe('compaction');
  });

  it('the task tool\'s subagent is subagent, though its system prompt begins as the main agent\'s and it has tools', () => {
    // What makes it a trap: the same opening, the same model, most of the same tools; only the
    // worker's sections of the prompt and the `yield` tool tell it apart.
    const main = parse('omp-18.2.3-main').conversation;
    const sub = parse('omp-18.2.3-subagent').conversation;
    expect(systemText(sub).slice(0, 1000)).toBe(systemText(main).slice(0, 1000));
    const names = (c: typeof main) => c.tools.map((t) => t.name);
    expect(names(sub).filter((n) => !names(main).includes(n))).toEqual(['yield']);
    expect(names(main).filter((n) => !names(sub).includes(n))).toEqual(['todo']);
    expect(classify('omp-18.2.3-subagent')).toBe('subagent');
  });

  it('a request without tools is a side call; the subagent\'s prompt alone is enough to tell it', () => {
    const sub = parse('omp-18.2.3-subagent');
    expect(ompHarness.classifyCall!({ ...sub.conversation, tools: [] }, sub.model, {})).toBe('subagent');
    const main = parse('omp-18.2.3-main');
    expect(ompHarness.classifyCall!({ ...main.conversation, tools: [] }, main.model, {})).toBe('side');
  });
});
