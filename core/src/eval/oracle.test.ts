import { startScriptedProxy } from '../testing';
import type { Task } from '../contracts/task';
import { oracleEngine } from './oracle';

// The oracle plays a task's turns on the agent's own calls. A harness may send a side call beside
// its first (OpenCode asks for a session title while the agent's first call is in flight, and
// either may reach the proxy first): the side call must not take the oracle's turn.
const task = {
  id: 'write-out', instruction: 'Create out.txt containing hi',
  oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'hi' } }] }],
} as unknown as Task;

const tools = [{ type: 'function', function: { name: 'write_file', parameters: { type: 'object' } } }];

async function withProxy(fn: (send: (kind: 'main' | 'title') => Promise<{ text: string; toolCalls: string[] }>) => Promise<void>) {
  const p = await startScriptedProxy(() => ({ text: 'unused' }), { engine: oracleEngine(() => task) });
  try {
    // The harness's classifier: the title request offers no tools (as OpenCode's does not).
    const s = p.proxy.openSession('rollout-0', { classify: (conv) => (conv.tools.length ? 'main' : 'title') });
    await fn(async (kind) => {
      const res = await fetch(`${s.baseUrl}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: kind === 'title' ? 'Generate a title for: Create out.txt' : 'Create out.txt containing hi' }], ...(kind === 'main' ? { tools } : {}) }),
      });
      expect(res.status).toBe(200);
      const m = ((await res.json()) as { choices: { message: { content: string | null; tool_calls?: { function: { name: string } }[] } }[] }).choices[0]!.message;
      return { text: m.content ?? '', toolCalls: (m.tool_calls ?? []).map((c) => c.function.name) };
    });
    expect(p.records.map((r) => r.role)).toEqual(expect.arrayContaining(['main', 'title']));
  } finally {
    await p.close();
  }
}

describe('oracleEngine', () => {
  it('a side call that arrives before the first main call does not take the oracle\'s turn', async () => {
    await withProxy(async (send) => {
      expect(await send('title')).toEqual({ text: 'Done.', toolCalls: [] });
      expect(await send('main')).toEqual({ text: '', toolCalls: ['write_file'] });
      expect(await send('main')).toEqual({ text: 'Done.', toolCalls: [] });
    });
  });

  it('nor one sent at the same time, nor one between the agent\'s turns', async () => {
    await withProxy(async (send) => {
      const [title, first] = await Promise.all([send('title'), send('main')]);
      expect(title).toEqual({ text: 'Done.', toolCalls: [] });
      expect(first.toolCalls).toEqual(['write_file']);
      expect(await send('title')).toEqual({ text: 'Done.', toolCalls: [] });
      expect(await send('main')).toEqual({ text: 'Done.', toolCalls: [] });
    });
  });
});
