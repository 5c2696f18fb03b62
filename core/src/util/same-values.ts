/**
 * Whether two JSON-shaped values would write out the same JSON (same keys in the same order,
 * same primitives), compared without writing either out; arrays are compared from their ends,
 * where a branched history differs.
 */
export function sameValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = a.length - 1; i >= 0; i--) if (!sameValues(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i] || !sameValues((a as Record<string, unknown>)[ka[i]!], (b as Record<string, unknown>)[kb[i]!])) return false;
  }
  return true;
}

/**
 * Whether two JSON-shaped values are equal, keys in any order (the relation `stableJson` keys
 * by), compared without allocating (`for…in` instead of key arrays): the ledger compares each
 * request's tools and messages with the last call's, most of a request's values.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = a.length - 1; i >= 0; i--) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (!(k in y) || !sameJson(x[k], y[k])) return false;
    keys++;
  }
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  for (const _k in y) keys--;
  return keys === 0;
}
