/**
 * Values frozen whole by their owner ("settled"): what is derived from one may be remembered by
 * its identity, since it can no longer change. The TITO ledger settles the messages it keeps, so
 * their template form is converted once, not at every later call of the session.
 */
const settled = new WeakSet<object>();

/** Freeze `value` and everything in it (plain data), and mark each of them settled; returns it. */
export function settle<T>(value: T): T {
  const freeze = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || settled.has(v)) return;
    for (const x of Object.values(v)) freeze(x);
    Object.freeze(v);
    settled.add(v);
  };
  freeze(value);
  return value;
}

/** Whether {@link settle} froze this value. */
export const isSettled = (value: object): boolean => settled.has(value);
