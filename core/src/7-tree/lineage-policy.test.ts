import type { ModelCallRecord } from '../contracts/records';
import { byteChatMl } from '../4-proxy/engine/byte-chatml';
import { startScriptedProxy } from '../testing';
import { buildTree } from './builder';
import { applyFilters } from './filters';
import { trainableNodes } from './trainable';

// A session shaped like OpenCode's past its context limit (recorded in
// plugins/harness-opencode/src/opencode.e2e.test.ts): the agent, a tool step, the compaction
// agent's summary (its own system prompt, no tools), the agent going on from the summary.
const AGENT = 'You are the agent.';
const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];
const messageEndId = byteChatMl().tokenizer.special('<|im_end|>');

async function compactedSession(): Promise<ModelCallRecord[]> {
  const p = await startScriptedProxy(({ callIndex }) => (callIndex === 0 ? { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] }
    : callIndex === 2 ? { text: 'Summary: listed the folder.' } : { text: `step ${callIndex}` }));
  try {
    const s = p.proxy.openSession('compacted', { classify: (c) => (c.messages[0]?.parts[0]?.type === 'text' && c.messages[0].parts[0].text.startsWith('Summarise') ? 'compaction' : 'main') });
    const post = async (messages: unknown[], withTools = true) => {
      const r = await fetch(`${s.baseUrl}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages, ...(withTools ? { tools } : {}) }),
      });
      return ((await r.json()) as { choices: { message: Record<string, unknown> }[] }).choices[0]!.message;
    };
    const user = { role: 'user', content: 'list the folder' };
    const first = await post([{ role: 'system', content: AGENT }, user]);
    const call = (first.tool_calls as { id: string }[])[0]!;
    await post([{ role: 'system', content: AGENT }, user, first, { role: 'tool', tool_call_id: call.id, content: 'a.txt' }]);
    await post([{ role: 'system', content: 'Summarise the conversation.' }, { role: 'user', content: 'the conversation so far' }], false);
    await post([{ role: 'system', content: AGENT }, { role: 'user', content: 'What did we do so far?' }, { role: 'assistant', content: 'Summary: listed the folder.' }, { role: 'user', content: 'Continue.' }]);
    await p.proxy.closeSession('compacted');
    return await p.store.read('compacted');
  } finally {
    await p.close();
  }
}

describe('trainable tokens per lineage policy (tree.excludeAuxiliary)', () => {
  it('the main line only: the agent\'s lines (root, and the one after the compaction) train; the compaction summary does not. Every line: all of them, with the rollout\'s reward', async () => {
    const records = await compactedSession();
    expect(records.map((r) => [r.role, r.lineage])).toEqual([
      ['main', { id: 0, cause: 'root' }], ['main', { id: 0, cause: 'root' }],
      ['compaction', { id: 1, cause: 'compaction' }], ['main', { id: 2, cause: 'compaction', startedBy: 2 }],
    ]);
    const outputs = (pick: (r: ModelCallRecord) => boolean) => records.filter(pick).reduce((n, r) => n + r.outputIds.length, 0);
    const trained = (excludeAuxiliary: boolean) => {
      const tree = applyFilters(buildTree(records, { rolloutId: 'compacted', taskId: 't', category: 'c', harness: 'h', outcome: 'ok', reward: 1 }, { messageEndId }),
        { dropDeadLeaves: false, excludeAuxiliary, maxBranches: 64 });
      return trainableNodes(tree).reduce((n, x) => n + x.tokens.length, 0);
    };
    const summary = outputs((r) => r.lineage!.id === 1);
    expect(summary).toBeGreaterThan(0);
    expect(trained(true)).toBe(outputs((r) => r.role === 'main'));
    expect(trained(false)).toBe(outputs(() => true));
    expect(trained(false) - trained(true)).toBe(summary);
  });
});
