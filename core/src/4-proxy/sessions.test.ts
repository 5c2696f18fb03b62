import { keyMatches } from './sessions';

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
