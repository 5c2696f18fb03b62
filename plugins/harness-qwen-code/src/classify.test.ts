import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { qwenCodeHarness } from './index';

// Requests recorded from Qwen Code 0.24.4 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const classify = (name: string) => {
  const parsed = parseWireRequest('openai-chat', recordedRequest(name).body);
  return qwenCodeHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('Qwen Code call classification, from recorded requests', () => {
  it('the main agent is main', () => {
    expect(classify('qwen-code-0.24.4-main')).toBe('main');
  });

  it('the managed memory extraction subagent, run after the turn on the same session, is memory', () => {
    const parsed = parseWireRequest('openai-chat', recordedRequest('qwen-code-0.24.4-memory').body);
    // What makes it a trap: it has tools and the main conversation's history, so neither "no
    // tools" nor a shared prefix with the main call would tell it apart.
    expect(parsed.conversation.tools.map((t) => t.name)).toEqual(['read_file', 'grep_search', 'glob', 'run_shell_command', 'write_file', 'edit']);
    expect(classify('qwen-code-0.24.4-memory')).toBe('memory');
  });
});
