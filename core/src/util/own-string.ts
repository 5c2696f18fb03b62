/**
 * `s` in a string of its own. V8 cuts a string of 13 characters or more out of a longer one as a
 * view of it, without copying: kept in a cache or a table, such a piece would keep its whole
 * source alive (a word cut from a rendered prompt kept the 28 MB prompt). Copied here, once.
 */
export function ownString(s: string): string {
  // The concatenation is a new string, flattened on the slice, of which the slice is a view.
  return s.length < 13 ? s : ` ${s}`.slice(1);
}
