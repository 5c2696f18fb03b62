import { sameJson, sameValues } from './same-values';

/** JSON with sorted keys: the relation sameJson decides. */
const sorted = (v: unknown): string => (Array.isArray(v) ? `[${v.map(sorted).join(',')}]`
  : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sorted((v as Record<string, unknown>)[k])}`).join(',')}}` : JSON.stringify(v));

describe('sameValues / sameJson', () => {
  it('sameValues wants the same JSON text, sameJson the same values with keys in any order', () => {
    const a = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const reordered = { properties: { path: { type: 'string' } }, type: 'object', required: ['path'] };
    expect([sameValues(a, structuredClone(a)), sameJson(a, structuredClone(a))]).toEqual([true, true]);
    expect([sameValues(a, reordered), sameJson(a, reordered)]).toEqual([false, true]);
    for (const [x, y] of [[{ a: 1 }, { a: 1, b: undefined }], [{ a: [1, 2] }, { a: [1, 2, 3] }], [{ a: null }, { a: {} }], [{ a: '1' }, { a: 1 }], [[{}], [[]]], [{ a: { b: 1 } }, { a: { b: 2 } }]] as const) {
      expect([x, y, sameValues(x, y), sameJson(x, y), sameJson(y, x)]).toEqual([x, y, false, false, false]);
    }
  });

  it('sameJson agrees with comparing sorted JSON on random values', () => {
    let seed = 3;
    const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
    const value = (depth: number): unknown => {
      const r = next() % (depth > 2 ? 4 : 7);
      if (r === 0) return next() % 3;
      if (r === 1) return ['a', 'b', ''][next() % 3];
      if (r === 2) return null;
      if (r === 3) return next() % 2 === 0;
      if (r === 4) return Array.from({ length: next() % 3 }, () => value(depth + 1));
      const keys = ['x', 'y', 'z'].filter(() => next() % 2 === 0);
      if (next() % 2) keys.reverse();
      return Object.fromEntries(keys.map((k) => [k, value(depth + 1)]));
    };
    let equal = 0;
    for (let n = 0; n < 4000; n++) {
      const a = value(0);
      const b = next() % 3 === 0 ? JSON.parse(JSON.stringify(a)) : value(0);
      const same = sorted(a) === sorted(b);
      if (same) equal++;
      expect([a, b, sameJson(a, b)]).toEqual([a, b, same]);
    }
    expect(equal).toBeGreaterThan(1000); // both answers are exercised
  });
});
