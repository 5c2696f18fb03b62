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

  it('its compaction summariser (merging the chunk summaries) is compaction; the agent going on from the summary is main', () => {
    const compaction = parse('openclaw-2026.9.6-compaction');
    expect(compaction.conversation.tools).toEqual([]);
    expect(openClawHarness.classifyCall!(compaction.conversation, compaction.model, {})).toBe('compaction');
    const after = parse('openclaw-2026.9.6-after-compaction');
    expect(openClawHarness.classifyCall!(after.conversation, after.model, {})).toBe('main');
  });

  it('another request without tools is a side call', () => {
    const p = parse('openclaw-2026.9.6-call1');
    expect(openClawHarness.classifyCall!({ ...p.conversation, tools: [] }, p.model, {})).toBe('side');
  });
});
