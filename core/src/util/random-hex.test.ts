import { randomHex } from './random-hex';

describe('randomHex', () => {
  it('gives ids of 2 hex digits a byte, all different, across refills of its pool', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => randomHex(1 + (i % 16)));
    ids.forEach((id, i) => expect(id).toMatch(new RegExp(`^[0-9a-f]{${2 * (1 + (i % 16))}}$`)));
    const long = ids.filter((id) => id.length >= 16);
    expect(new Set(long).size).toBe(long.length);
    // Fresh bytes: the digits of many ids are spread over all 16 values.
    const digits = new Set(ids.join(''));
    expect(digits.size).toBe(16);
  });
  it('refuses more than its pool holds', () => {
    expect(() => randomHex(4097)).toThrow(RangeError);
    expect(randomHex(4096)).toHaveLength(8192);
  });
});
