import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { claudeCodeHarness } from './index';

// Requests recorded from the real CLI through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const classify = (name: string) => {
  const parsed = parseWireRequest('anthropic-messages', recordedRequest(name).body);
  return claudeCodeHarness.classifyCall!(parsed.conversation, parsed.model, parsed.responseSchema ? { responseSchema: parsed.responseSchema } : {});
};

describe('Claude Code call classification, from recorded requests', () => {
  it('the main agent of 2.1.332 (and of 2.1.197) is main', () => {
    expect(classify('claude-code-2.1.332-main')).toBe('main');
    expect(classify('claude-code-2.1.332-agent-main')).toBe('main');
    expect(classify('claude-code-2.1.197-main')).toBe('main');
  });

  it('a subagent started with the Agent tool (cc_is_subagent=true) is a subagent, though it has the same tools', () => {
    expect(classify('claude-code-2.1.332-subagent')).toBe('subagent');
  });

  it('the session-title call with its JSON-schema output_config.format is a title side call', () => {
    expect(classify('claude-code-2.1.197-title')).toBe('title');
  });
});
