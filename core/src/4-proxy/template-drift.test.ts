import { main } from '../cli/main';
import { startScriptedProxy } from '../testing';
import { testModel } from '@clawgym/model-hf/testing';

// Qwen3's template renders <think> only for assistant turns after the last real user message:
// once a new user turn arrives, earlier reasoning disappears from a re-render, so the template's
// render of the conversation no longer extends the prompt the engine saw (prime-rl #1334,
// verl #6854). The proxy keeps the raw ids and records the drift with its reason.
const qwen3 = testModel('qwen3');
const tools = [{ type: 'function', function: { name: 'run', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } }];
type P = Awaited<ReturnType<typeof startScriptedProxy>>;
let p: P;
beforeAll(async () => {
  p = await startScriptedProxy(({ callIndex }) => (callIndex === 0
    ? { thinking: 'I will list the files.', toolCalls: [{ name: 'run', arguments: { cmd: 'ls' } }] }
    : callIndex === 1 ? { thinking: 'One file.', text: 'There is a.txt.' } : { text: 'ok' }), { template: qwen3 });
});
afterAll(async () => { await p.close(); });

async function chat(id: string, messages: unknown[]) {
  const key = p.proxy.sessions.get(id)?.key ?? p.proxy.openSession(id).apiKey;
  const res = await fetch(`${p.url}/s/${id}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'qwen3', messages, tools }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { choices: { message: { content: string | null; reasoning_content?: string; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] } }[] };
}

describe('template drift through the proxy with Qwen3\'s template', () => {
  it('keeps the raw ids when a new user turn drops earlier <think>, and records the call as realigned with the reason', async () => {
    const user1 = { role: 'user', content: 'What is in the folder?' };
    const r0 = (await chat('qwen-drift', [user1])).choices[0]!.message;
    expect(r0.reasoning_content).toBe('I will list the files.');
    expect(r0.tool_calls?.[0]?.function).toEqual({ name: 'run', arguments: '{"cmd":"ls"}' });
    const a0 = { role: 'assistant', content: r0.content, tool_calls: r0.tool_calls };
    const t0 = { role: 'tool', tool_call_id: r0.tool_calls![0]!.id, content: 'a.txt' };
    const r1 = (await chat('qwen-drift', [user1, a0, t0])).choices[0]!.message;
    expect(r1).toMatchObject({ content: 'There is a.txt.', reasoning_content: 'One file.' });
    const a1 = { role: 'assistant', content: r1.content };
    const user2 = { role: 'user', content: 'Thanks. Now delete it.' };
    await chat('qwen-drift', [user1, a0, t0, a1, user2]);

    const [c0, c1, c2] = await p.store.read('qwen-drift');
    expect(c1!.drift).toEqual({ class: 'clean', reason: 'extends call 0: the reused prompt equals the template\'s render of the whole conversation' });
    expect(c2!.origin).toMatchObject({ kind: 'reuse', parentCall: 1 });
    expect(c2!.drift!.class).toBe('realigned');
    expect(c2!.drift!.reason).toMatch(/^extends call 1: the template drops the reply's <think> reasoning once a new user turn follows/);
    // The engine saw call 1's prompt and its raw output verbatim…
    const seen = [...c1!.promptIds, ...c1!.outputIds];
    expect(Array.from(c2!.promptIds.subarray(0, seen.length))).toEqual(seen);
    expect(qwen3.tokenizer.decode(c2!.promptIds)).toContain('<think>\nOne file.\n</think>');
    // …while the template's render of the whole conversation has dropped that reasoning.
    const full = qwen3.chatTemplate.renderPrompt({
      tools: [{ name: 'run', description: 'Run a command', parameters: tools[0]!.function.parameters }],
      messages: [
        { role: 'user', parts: [{ type: 'text', text: user1.content }] },
        { role: 'assistant', parts: [{ type: 'thinking', text: 'I will list the files.' }, { type: 'tool_call', id: 'x', name: 'run', arguments: '{"cmd":"ls"}' }] },
        { role: 'tool', parts: [{ type: 'tool_result', callId: 'x', content: 'a.txt' }] },
        { role: 'assistant', parts: [{ type: 'thinking', text: 'One file.' }, { type: 'text', text: 'There is a.txt.' }] },
        { role: 'user', parts: [{ type: 'text', text: user2.content }] },
      ],
    });
    expect(full.text).not.toContain('One file.');
    expect(c0!.drift).toEqual({ class: 'clean', reason: 'first call of the session: rendered in full' });
  });

  it('shows in clawgym inspect: drift per call of the rollout, per rollout and for the run', async () => {
    let out = '';
    const run = async (argv: string[]) => { out = ''; return main(argv, { out: (s) => { out += s; }, err: (s) => { out += s; }, cwd: p.dir }); };
    expect(await run(['inspect', p.dir, '--rollout', 'qwen-drift'])).toBe(0);
    expect(out).toMatch(/PROMPT ORIGIN\s+DRIFT/);
    expect(out).toContain('drift: 2 clean, 1 realigned, 0 fork');
    expect(out).toContain("call 2 realigned: extends call 1: the template drops the reply's <think> reasoning");
    expect(await run(['inspect', p.dir])).toBe(0);
    expect(out).toMatch(/qwen-drift\s+3\s+100\.0%\s+0\s+0\s+0\s+0\s+2\/1\/0/);
    expect(out).toContain('all: drift: 2 clean, 1 realigned, 0 fork');
    expect(out).toContain("realigned or forked 1×: the template drops the reply's <think> reasoning");
  });
});
