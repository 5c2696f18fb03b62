import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { piHarness } from './index';

// Requests recorded from Pi 0.73.1 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const classify = (name: string) => {
  const parsed = parseWireRequest('openai-chat', recordedRequest(name).body);
  return piHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('Pi call classification, from recorded requests', () => {
  it('the main agent is main', () => {
    expect(classify('pi-0.73.1-main')).toBe('main');
  });

  it('the context summary Pi makes when the window fills is compaction', () => {
    expect(classify('pi-0.73.1-compaction')).toBe('compaction');
  });
});
