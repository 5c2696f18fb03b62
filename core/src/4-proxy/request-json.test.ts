import { isSettled } from '../util/settled';
import { RequestJson, SharedMembers } from './request-json';
import { anthropicMessages } from './wire/anthropic';
import { openAiChat } from './wire/openai-chat';
import { ParseMemo, WireError } from './wire/types';

const buf = (v: unknown, space?: number) => Buffer.from(JSON.stringify(v, null, space));

/** A deterministic pseudo-random source (tests repeat exactly). */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('RequestJson: the parse of a session\'s bodies, reusing what earlier bodies held', () => {
  const system = 'You are an agent. '.repeat(40);
  const tools = [{ type: 'function', function: { name: 'exec', description: 'Run a command in the workspace. '.repeat(10), parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];
  const turn = (k: number) => [
    { role: 'assistant', content: null, tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'exec', arguments: `{"command":"ls ${k}"}` } }] },
    { role: 'tool', tool_call_id: `c${k}`, content: `file${k}.txt — naïve 日本 🙂 "quoted" \\ back\nslash` },
  ];
  const body = (turns: number, extra: Record<string, unknown> = {}) => ({
    model: 'qwen3', messages: [{ role: 'system', content: system }, { role: 'user', content: 'Do it.' }, ...Array.from({ length: turns }, (_, k) => turn(k)).flat()], tools, max_tokens: 256, ...extra,
  });

  it('gives what JSON.parse gives, and the messages and members an earlier body held are the same (frozen) objects', () => {
    const r = new RequestJson(new SharedMembers());
    const a = r.parse(buf(body(3)), 'messages') as Record<string, unknown[]>;
    expect(a).toEqual(body(3));
    const b = r.parse(buf(body(4)), 'messages') as Record<string, unknown[]>;
    expect(b).toEqual(body(4));
    expect(Object.keys(b)).toEqual(Object.keys(body(4)));
    for (let i = 0; i < a.messages!.length; i++) expect(b.messages![i]).toBe(a.messages![i]);
    expect(b.messages![a.messages!.length]).not.toBe(undefined);
    expect(b.tools).toBe(a.tools);
    expect(isSettled(b.messages![0] as object)).toBe(true);
    expect(Object.isFrozen(b.tools)).toBe(true);
    expect(() => { (b.messages![0] as Record<string, unknown>).content = 'changed'; }).toThrow(TypeError);
  });

  it('shares a long member (the tool list) across sessions, and not a value whose bytes differ', () => {
    const shared = new SharedMembers();
    const one = new RequestJson(shared).parse(buf(body(1)), 'messages') as Record<string, unknown>;
    const two = new RequestJson(shared).parse(buf(body(2)), 'messages') as Record<string, unknown>;
    expect(two.tools).toBe(one.tools);
    const other = [{ ...tools[0], function: { ...tools[0]!.function, description: 'Run a shell command' } }];
    const three = new RequestJson(shared).parse(buf({ ...body(2), tools: other }), 'messages') as Record<string, unknown>;
    expect(three.tools).toEqual(other);
    expect(three.tools).not.toBe(one.tools);
  });

  it('a history rewritten in the middle reuses only the messages before the change', () => {
    const r = new RequestJson(new SharedMembers());
    const a = r.parse(buf(body(4)), 'messages') as Record<string, unknown[]>;
    const edited = body(5);
    (edited.messages[4] as Record<string, unknown>).content = 'rewritten';
    const b = r.parse(buf(edited), 'messages') as Record<string, unknown[]>;
    expect(b).toEqual(edited);
    for (let i = 0; i < 4; i++) expect(b.messages![i]).toBe(a.messages![i]);
    for (let i = 4; i < a.messages!.length; i++) expect(b.messages![i]).not.toBe(a.messages![i]);
  });

  it('number elements and members are not mistaken for their prefixes (25 vs 256)', () => {
    const r = new RequestJson(new SharedMembers());
    expect(r.parse(Buffer.from('{"messages":[1,25],"max_tokens":25}'), 'messages')).toEqual({ messages: [1, 25], max_tokens: 25 });
    expect(r.parse(Buffer.from('{"messages":[1,256,3],"max_tokens":256}'), 'messages')).toEqual({ messages: [1, 256, 3], max_tokens: 256 });
    expect(r.parse(Buffer.from('{"messages":[1,256,3],"max_tokens":2560}'), 'messages')).toEqual({ messages: [1, 256, 3], max_tokens: 2560 });
  });

  it('equals JSON.parse on random edits of a growing conversation: appended turns, rewrites, reordered keys, whitespace, duplicates', () => {
    const rand = rng(7);
    const shared = new SharedMembers();
    const sessions = [new RequestJson(shared), new RequestJson(shared)];
    let turns = 1;
    for (let n = 0; n < 400; n++) {
      const v = body(turns, rand() < 0.2 ? { stream: true } : {});
      if (rand() < 0.15) (v.messages[Math.floor(rand() * v.messages.length)] as Record<string, unknown>).content = `edit ${n}`;
      if (rand() < 0.1) v.messages.push(...turn(99));
      let text = JSON.stringify(rand() < 0.1 ? Object.assign({ tools: v.tools }, v) : v, null, rand() < 0.1 ? 2 : undefined);
      if (rand() < 0.05) text = text.replace('"max_tokens":256', '"max_tokens":256,"max_tokens":7');
      if (rand() < 0.05) text = ` \n${text}\t `;
      const got = sessions[n % 2]!.parse(Buffer.from(text), 'messages');
      const want = JSON.parse(text);
      expect(got).toEqual(want);
      expect(Object.keys(got as object)).toEqual(Object.keys(want));
      turns = rand() < 0.1 ? 1 : turns + 1;
    }
  });

  it('what it does not expect is read the plain way, with the errors a client is told', () => {
    const r = new RequestJson(new SharedMembers());
    r.parse(buf(body(2)), 'messages');
    expect(r.parse(Buffer.from('[1,2]'), 'messages')).toEqual([1, 2]);
    expect(r.parse(Buffer.from('{"__proto__":{"x":1},"messages":[]}'), 'messages')).toEqual(JSON.parse('{"__proto__":{"x":1},"messages":[]}'));
    const bad = (text: string) => { try { r.parse(Buffer.from(text), 'messages'); } catch (err) { return err as WireError; } throw new Error(`accepted ${text}`); };
    expect(bad('{"messages":[1,2,]}').message).toMatch(/^request body is not valid JSON: /);
    expect(bad('{"messages":[1] x}').status).toBe(400);
    expect(bad('{"messages":[1]}{}').status).toBe(400);
    expect(bad('{"a":1,}').status).toBe(400);
    expect(bad(`{"messages":[${'['.repeat(200)}${']'.repeat(200)}]}`).message).toBe('request body nests 202 levels deep; the limit is 128');
    // After a refusal, the next body is read in full again, and right.
    expect(r.parse(buf(body(3)), 'messages')).toEqual(body(3));
  });

  it('a body that repeats the previous one\'s history with a control character added is refused, not reused', () => {
    const r = new RequestJson(new SharedMembers());
    r.parse(buf(body(2)), 'messages');
    const text = JSON.stringify(body(3)).replace('Do it.', 'Do\u0001it.');
    expect(() => r.parse(Buffer.from(text), 'messages')).toThrow(/not valid JSON/);
  });
});

describe('the wire adapters convert what an earlier body held once', () => {
  it('Chat: the same canonical message and tool list for reused raw values; a changed message converts anew', () => {
    const r = new RequestJson(new SharedMembers());
    const tools = [{ type: 'function', function: { name: 'exec', description: 'x'.repeat(300), parameters: { type: 'object' } } }];
    const msgs = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi' }];
    const a = openAiChat.parse(r.parse(buf({ model: 'm', messages: msgs, tools }), 'messages'));
    const b = openAiChat.parse(r.parse(buf({ model: 'm', messages: [...msgs, { role: 'assistant', content: 'ok' }], tools }), 'messages'));
    expect(b.conversation.messages[0]).toBe(a.conversation.messages[0]);
    expect(b.conversation.messages[1]).toBe(a.conversation.messages[1]);
    expect(b.conversation.messages[2]).toEqual({ role: 'assistant', parts: [{ type: 'text', text: 'ok' }] });
    expect(b.conversation.tools).toBe(a.conversation.tools);
    const c = openAiChat.parse(r.parse(buf({ model: 'm', messages: [msgs[0], { role: 'user', content: 'changed' }], tools }), 'messages'));
    expect(c.conversation.messages[1]).toEqual({ role: 'user', parts: [{ type: 'text', text: 'changed' }] });
  });

  it('Anthropic: a deferred tool stays out until a later message loads it, though the tool list is the same bytes', () => {
    const r = new RequestJson(new SharedMembers());
    const tools = [
      { name: 'Bash', description: 'run', input_schema: { type: 'object' } },
      { name: 'Notebook', description: 'n'.repeat(300), input_schema: { type: 'object' }, defer_loading: true },
    ];
    const first = [{ role: 'user', content: 'hi' }];
    const a = anthropicMessages.parse(r.parse(buf({ model: 'm', max_tokens: 9, messages: first, tools }), 'messages'));
    expect(a.conversation.tools.map((t) => t.name)).toEqual(['Bash']);
    expect(a.notes).toEqual(['deferred tools not rendered until a tool_reference loads them: Notebook']);
    const loaded = [...first, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ToolSearch', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'tool_reference', tool_name: 'Notebook' }] }] }];
    const b = anthropicMessages.parse(r.parse(buf({ model: 'm', max_tokens: 9, messages: loaded, tools }), 'messages'));
    expect(b.conversation.tools.map((t) => t.name)).toEqual(['Bash', 'Notebook']);
    expect(b.conversation.messages[0]).toBe(a.conversation.messages[0]);
    expect(b.notes ?? []).toEqual([]);
    // Back to a history without the reference (a branch): deferred again.
    const c = anthropicMessages.parse(r.parse(buf({ model: 'm', max_tokens: 9, messages: first, tools }), 'messages'));
    expect(c.conversation.tools.map((t) => t.name)).toEqual(['Bash']);
  });

  it('with the session\'s ParseMemo, each adapter gives what it gives without one, over random edits; reused places give the same objects', () => {
    const rand = rng(11);
    const tools = [{ type: 'function', function: { name: 'exec', description: 'x'.repeat(300), parameters: { type: 'object' } } }];
    const aTools = [{ name: 'Bash', description: 'run', input_schema: { type: 'object' } }, { name: 'Notebook', description: 'n'.repeat(300), input_schema: { type: 'object' }, defer_loading: true }];
    const chatTurn = (k: number) => [
      { role: 'assistant', content: null, tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'exec', arguments: `{"command":"ls ${k}"}` } }] },
      { role: 'tool', tool_call_id: `c${k}`, content: `file${k}.txt` },
    ];
    const aTurn = (k: number) => [
      { role: 'assistant', content: [{ type: 'tool_use', id: `t${k}`, name: k % 5 === 3 ? 'ToolSearch' : 'Bash', input: { command: `ls ${k}` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${k}`, content: k % 5 === 3 ? [{ type: 'tool_reference', tool_name: 'Notebook' }] : `file${k}.txt` }] },
    ];
    const cases = [
      { adapter: openAiChat, body: (turns: number[]) => ({ model: 'm', messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'go' }, ...turns.flatMap(chatTurn)], tools }) },
      { adapter: anthropicMessages, body: (turns: number[]) => ({ model: 'm', max_tokens: 9, system: [{ type: 'text', text: 'sys' }], messages: [{ role: 'user', content: 'go' }, ...turns.flatMap(aTurn)], tools: aTools }) },
    ];
    let reusedPlaces = 0;
    for (const { adapter, body: bodyOf } of cases) {
      const r = new RequestJson(new SharedMembers());
      const memo = new ParseMemo();
      let turns: number[] = [];
      let last: ReturnType<typeof adapter.parse> | undefined;
      for (let n = 0; n < 150; n++) {
        const edit = rand();
        if (edit < 0.1 && turns.length > 2) turns = turns.slice(0, Math.floor(rand() * turns.length)); // a branch
        else if (edit < 0.2 && turns.length) turns[Math.floor(rand() * turns.length)] = 100 + n; // a rewrite in the middle
        else turns = [...turns, n];
        const text = JSON.stringify(bodyOf(turns));
        const got = adapter.parse(r.parse(Buffer.from(text), 'messages'), memo);
        const want = adapter.parse(JSON.parse(text));
        expect(got.conversation).toEqual(want.conversation);
        expect(got.notes ?? []).toEqual(want.notes ?? []);
        if (last) {
          const n0 = Math.min(last.conversation.messages.length, got.conversation.messages.length);
          for (let i = 0; i < n0 && JSON.stringify(last.conversation.messages[i]) === JSON.stringify(got.conversation.messages[i]); i++) {
            expect(got.conversation.messages[i]).toBe(last.conversation.messages[i]);
            reusedPlaces++;
          }
        }
        last = got;
      }
    }
    expect(reusedPlaces).toBeGreaterThan(1000);
  });
});
