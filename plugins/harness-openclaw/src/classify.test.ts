import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { openClawHarness } from './index';

// Requests recorded from OpenClaw 2026.9.6 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);

describe('OpenClaw call classification, from recorded requests', () => {
  it('both recorded calls of its agent are main', () => {
    for (const name of ['openclaw-2026.9.6-call1', 'openclaw-2026.9.6-call2']) {
      const p = parse(name);
      expect(openClawHarness.classifyCall!(p.conversation, p.model, {})).toBe('main');
    }
  });

  it('the same request without tools (a summary or compaction helper) is a side call', () => {
    const p = parse('openclaw-2026.9.6-call1');
    expect(openClawHarness.classifyCall!({ ...p.conversation, tools: [] }, p.model, {})).toBe('side');
  });
});
