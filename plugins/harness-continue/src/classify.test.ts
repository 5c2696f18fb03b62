import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { continueHarness } from './index';

// Requests recorded from Continue 1.5.47 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return continueHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('Continue call classification, from recorded requests', () => {
  it('the main agent is main: its first call, the next, and the one that goes on from a summary', () => {
    expect(classify('continue-1.5.47-main')).toBe('main');
    expect(classify('continue-1.5.47-call2')).toBe('main');
    expect(classify('continue-1.5.47-after-compaction')).toBe('main');
  });

  it('the compaction\'s summary request is compaction, though it has the main agent\'s system prompt and tools', () => {
    // What makes it a trap: only its last user message tells it from the agent.
    // The main call after it, of the same rollout (the workspace's path is in the system prompt).
    const main = parse('continue-1.5.47-after-compaction').conversation;
    const summary = parse('continue-1.5.47-compaction').conversation;
    expect(systemText(summary)).toBe(systemText(main));
    expect(summary.tools).toEqual(main.tools);
    expect(classify('continue-1.5.47-compaction')).toBe('compaction');
  });
});
