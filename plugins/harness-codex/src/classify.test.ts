import { parseWireRequest } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { codexHarness } from './index';

// Requests recorded from Codex 0.171.0 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md);
// the compaction with `model_auto_compact_token_limit = 3000` (the autoCompactTokenLimit option).
const classify = (name: string) => {
  const parsed = parseWireRequest('openai-responses', recordedRequest(name).body);
  return codexHarness.classifyCall!(parsed.conversation, parsed.model, {});
};

describe('Codex call classification, from recorded requests', () => {
  it('the main agent is main, also when it continues from a compaction summary', () => {
    expect(classify('codex-0.171.0-call1')).toBe('main');
    expect(classify('codex-0.171.0-call2')).toBe('main');
    expect(classify('codex-0.171.0-after-compaction')).toBe('main');
  });

  it('the context-checkpoint compaction call is compaction', () => {
    expect(classify('codex-0.171.0-compaction')).toBe('compaction');
  });
});
