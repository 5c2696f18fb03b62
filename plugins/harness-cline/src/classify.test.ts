import { parseWireRequest, systemText } from '@clawgym/core';
import { recordedRequest } from '@clawgym/core/testing';
import { clineHarness } from './index';

// Requests recorded from Cline 3.0.65 through CLAWGYM_E2E_CAPTURE (see the fixtures' README.md).
const parse = (name: string) => parseWireRequest('openai-chat', recordedRequest(name).body);
const classify = (name: string) => {
  const parsed = parse(name);
  return clineHarness.classifyCall!(parsed.conversation, parsed.model, {});
};
const toolNames = (name: string) => parse(name).conversation.tools.map((t) => t.name);

describe('Cline call classification, from recorded requests', () => {
  it('the main agent is main, before and after a compaction', () => {
    expect(classify('cline-3.0.65-main')).toBe('main');
    expect(classify('cline-3.0.65-after-compaction')).toBe('main');
    expect(systemText(parse('cline-3.0.65-after-compaction').conversation)).toMatch(/^You are Cline/);
  });

  it('the agentic compaction\'s summary call is compaction', () => {
    expect(parse('cline-3.0.65-compaction').conversation.tools).toEqual([]);
    expect(classify('cline-3.0.65-compaction')).toBe('compaction');
  });

  it('a spawn_agent subagent and a teammate are subagent: the prompt the main agent wrote, its tools less team_spawn_teammate', () => {
    const main = new Set(toolNames('cline-3.0.65-main'));
    // What makes them traps: each keeps most of the main agent's tools, and its system prompt is
    // whatever the model wrote.
    expect(systemText(parse('cline-3.0.65-subagent').conversation)).toBe('You look at files.');
    expect(toolNames('cline-3.0.65-subagent').every((n) => main.has(n))).toBe(true);
    expect(toolNames('cline-3.0.65-subagent').some((n) => n.startsWith('team_'))).toBe(false);
    expect(toolNames('cline-3.0.65-teammate')).toContain('team_run_task');
    expect(toolNames('cline-3.0.65-teammate')).not.toContain('spawn_agent');
    expect(classify('cline-3.0.65-subagent')).toBe('subagent');
    expect(classify('cline-3.0.65-teammate')).toBe('subagent');
  });
});
