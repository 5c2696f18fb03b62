import { byteChatMl } from './engine/byte-chatml';
import { keyMatches, Sessions } from './sessions';
import { anthropicMessages } from './wire/anthropic';

describe('keyMatches', () => {
  const key = 'a3f09c1d5e7b2846a3f09c1d5e7b2846';
  it('accepts exactly the session key', () => {
    expect(keyMatches(key, key)).toBe(true);
    expect(keyMatches(`${key}`.slice(0), key)).toBe(true);
  });
  it('refuses a key differing anywhere, of another length, empty or missing', () => {
    for (const i of [0, 7, key.length - 1]) expect(keyMatches(`${key.slice(0, i)}${key[i] === '0' ? '1' : '0'}${key.slice(i + 1)}`, key)).toBe(false);
    expect(keyMatches(key.slice(0, -1), key)).toBe(false);
    expect(keyMatches(`${key}0`, key)).toBe(false);
    expect(keyMatches('', key)).toBe(false);
    expect(keyMatches(undefined, key)).toBe(false);
    // Code units, not bytes: a look-alike of the same length is another key.
    expect(keyMatches(`${key.slice(0, -1)}\u0136`, key)).toBe(false);
    expect(keyMatches('é', 'é')).toBe(true);
  });
});

describe('Sessions.close', () => {
  it('drops what the session held for its next request: the ledger, the last body and the last conversation', async () => {
    const sessions = new Sessions(byteChatMl().chatTemplate);
    const s = sessions.open('r1');
    const body = Buffer.from(JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'a tool result' }] }));
    const parsed = anthropicMessages.parse(s.json.parse(body, anthropicMessages.historyKey), s.parsed);
    s.checked = parsed.conversation.messages;
    const held = { ledger: s.ledger, json: s.json, parsed: s.parsed };
    await sessions.close('r1');
    expect(s.closed).toBe(true);
    expect(s.ledger).not.toBe(held.ledger);
    expect(s.json).not.toBe(held.json);
    // The wire adapter's memo held the last request's messages (a 30 MB tool result, for every closed session).
    expect(s.parsed).not.toBe(held.parsed);
    expect(s.checked).toEqual([]);
  });
});
