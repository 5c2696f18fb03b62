/**
 * Values frozen whole by their owner ("settled"): what is derived from one may be remembered by
 * its identity, since it can no longer change. The TITO ledger settles the messages it keeps, so
 * their template form is converted once, not at every later call of the session.
 */

/**
 * The mark of a settled value: a hidden property of the value itself (non-enumerable, a symbol:
 * JSON, `Object.keys`, `for…in`, spreads and copies never see it). A set of settled values was
 * one entry per object of every message a session keeps, a table of millions whose look-ups
 * missed the cache at every call; the mark is read where the value is read anyway.
 */
const SETTLED = Symbol('settled');

/** Values that were already frozen by someone else when settled (no property can be added to them). */
const frozenBefore = new WeakSet<object>();

/** The mark's descriptor, one for all (non-enumerable, read-only, not configurable). */
const MARK: PropertyDescriptor = Object.freeze({ value: true });

/**
 * Freeze `root` and what it holds, children before parents, with a stack of our own instead of
 * the call stack: a client's tool schema 20,000 levels deep would overflow it.
 */
function freeze(root: unknown): void {
  if (typeof root !== 'object' || root === null || isSettled(root)) return;
  // Each entry: an object, and whether its children are on the stack already.
  const stack: [object, boolean][] = [[root, false]];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const v = top[0];
    if (!top[1]) {
      top[1] = true;
      // No array of the values made per object (most of what is settled is small and new).
      const push = (c: unknown) => { if (typeof c === 'object' && c !== null && !isSettled(c)) stack.push([c, false]); };
      if (Array.isArray(v)) for (let i = 0; i < v.length; i++) push(v[i]);
      else for (const k in v) if (Object.prototype.hasOwnProperty.call(v, k)) push((v as Record<string, unknown>)[k]);
      continue;
    }
    stack.pop();
    if (isSettled(v)) continue; // reached twice (shared within the value)
    if (Object.isExtensible(v)) Object.defineProperty(v, SETTLED, MARK);
    else frozenBefore.add(v);
    Object.freeze(v);
  }
}

/** Freeze `value` and everything in it (plain data), and mark each of them settled; returns it. */
export function settle<T>(value: T): T {
  freeze(value);
  return value;
}

/** Whether {@link settle} froze this value. */
export const isSettled = (value: object): boolean => (value as { [SETTLED]?: true })[SETTLED] === true || (Object.isFrozen(value) && frozenBefore.has(value));
