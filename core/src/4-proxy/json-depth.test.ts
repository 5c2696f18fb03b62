import { jsonNestingDepth } from './json-depth';
import { startScriptedProxy } from '../testing';

describe('jsonNestingDepth', () => {
  it('counts brackets outside strings only', () => {
    expect(jsonNestingDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonNestingDepth('"\\"[["')).toBe(0);
    expect(jsonNestingDepth('[]')).toBe(1);
    expect(jsonNestingDepth('["\\\\", [["\\\\\\"]"]]]')).toBe(3);
    expect(jsonNestingDepth('[["unterminated [[[')).toBe(2);
  });

  it('agrees with a character-by-character scan on random text of quotes, backslashes and brackets', () => {
    // The reference: every character in turn, a backslash in a string skipping the next one.
    const reference = (text: string) => {
      let depth = 0;
      let max = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) { if (c === '\\') i++; else if (c === '"') inString = false; }
        else if (c === '"') inString = true;
        else if (c === '[' || c === '{') max = Math.max(max, ++depth);
        else if (c === ']' || c === '}') depth--;
      }
      return max;
    };
    let seed = 7;
    const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
    const alphabet = ['"', '\\', '[', '{', ']', '}', 'a', ' '];
    for (let n = 0; n < 3000; n++) {
      const text = Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join('');
      expect([text, jsonNestingDepth(text)]).toEqual([text, reference(text)]);
    }
  });
});

describe('deeply nested requests', () => {
  type P = Awaited<ReturnType<typeof startScriptedProxy>>;
  let p: P;
  beforeAll(async () => { p = await startScriptedProxy(() => ({ text: 'ok' })); });
  afterAll(async () => { await p.close(); });
  const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

  const opened = new Map<string, ReturnType<typeof p.proxy.openSession>>();
  async function post(id: string, path: string, body: string) {
    const s = opened.get(id) ?? p.proxy.openSession(id);
    opened.set(id, s);
    const res = await fetch(`${s.baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': s.apiKey, authorization: `Bearer ${s.apiKey}` }, body });
    return { status: res.status, body: await res.json() as { error: { message: string; type: string } } };
  }

  it('a tool schema nested 200k deep is a 400 naming the limit, in each format', async () => {
    const schema = deep(200_000);
    const anthropic = await post('deep-a', '/v1/messages', `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"t","input_schema":${schema}}]}`);
    expect(anthropic.status).toBe(400);
    expect(anthropic.body.error).toMatchObject({ type: 'invalid_request_error', message: 'request body nests 200003 levels deep; the limit is 128' });
    const chat = await post('deep-c', '/v1/chat/completions', `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":${schema}}}]}`);
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toMatch(/the limit is 128$/);
    const responses = await post('deep-r', '/v1/responses', `{"model":"m","input":"x","tools":[{"type":"function","name":"t","parameters":${schema}}]}`);
    expect(responses.status).toBe(400);
    expect(responses.body.error.type).toBe('invalid_request_error');
  });

  it('tool-call arguments nested deep inside a string are refused too', async () => {
    const args = JSON.stringify(deep(100_000));
    const chat = await post('deep-args', '/v1/chat/completions', `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":${args}}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`);
    expect(chat.status).toBe(400);
    expect(chat.body.error.message).toBe('the arguments of tool call "t" in message 1 nests 100000 levels deep; the limit is 128');
    // A session's messages already checked are not read again; a message changed at the same place is.
    const history = (args: string) => `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":${args}}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`;
    expect((await post('args-then', '/v1/chat/completions', history(JSON.stringify('{"a":1}')))).status).toBe(200);
    const changed = await post('args-then', '/v1/chat/completions', history(args));
    expect(changed.status).toBe(400);
    expect(changed.body.error.message).toBe('the arguments of tool call "t" in message 1 nests 100000 levels deep; the limit is 128');
  });

  it('nesting under the limit is answered', async () => {
    const ok = await post('deep-ok', '/v1/messages', `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"t","input_schema":${deep(100)}}]}`);
    expect(ok.status).toBe(200);
  });
});

describe('Responses-format error types', () => {
  it('401, 404 and 413 are invalid_request_error with a code; engine failures server_error', async () => {
    const p = await startScriptedProxy(() => ({ failBefore: 'boom' }), { maxBodyBytes: 1024 });
    try {
      const s = p.proxy.openSession('r-err');
      const call = async (path: string, key: string, body: string) => {
        const res = await fetch(`${p.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body });
        return [res.status, ((await res.json()) as { error: { type: string; code: string } }).error] as const;
      };
      expect(await call('/s/r-err/v1/responses', 'wrong', '{}')).toEqual([401, expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_api_key' })]);
      expect(await call('/s/nobody/v1/responses', s.apiKey, '{}')).toEqual([404, expect.objectContaining({ type: 'invalid_request_error' })]);
      expect(await call('/s/r-err/v1/responses', s.apiKey, JSON.stringify({ model: 'm', input: 'x'.repeat(4096) }))).toEqual([413, expect.objectContaining({ type: 'invalid_request_error' })]);
      expect(await call('/s/r-err/v1/responses', s.apiKey, JSON.stringify({ model: 'm', input: 'x' }))).toEqual([500, expect.objectContaining({ type: 'server_error' })]);
    } finally {
      await p.close();
    }
  });
});

describe('a model writing a tool call nested deeper than JSON.stringify can recurse', () => {
  it('gets it back as text (a malformed call), not an engine failure', async () => {
    const nested = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const q = await startScriptedProxy(() => ({ raw: `<tool_call>{"name":"t","arguments":{"a":${nested}}}</tool_call>` }));
    try {
      const s = q.proxy.openSession('deep-output');
      const res = await fetch(`${s.baseUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.apiKey}` }, body: JSON.stringify({ model: 'm', max_tokens: 300_000, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 't', parameters: { type: 'object' } } }] }) });
      const text = await res.text();
      expect({ status: res.status, text: text.slice(0, 300) }).toMatchObject({ status: 200 });
      const msg = ((JSON.parse(text)) as { choices: { message: { content: string; tool_calls?: unknown[] } }[] }).choices[0]!.message;
      expect(msg.tool_calls ?? []).toEqual([]);
      expect(msg.content.startsWith('<tool_call>{"name":"t"')).toBe(true);
      expect(await q.proxy.closeSession('deep-output')).toEqual({ calls: 1, infraFailure: undefined, conversation: [expect.objectContaining({ role: 'user' }), expect.objectContaining({ role: 'assistant' })] });
    } finally {
      await q.close();
    }
  }, 30_000);
});
