/**
 * How deeply `text` nests `[`/`{`, found by one scan without parsing (brackets inside strings
 * do not count). Checked before anything recursive (JSON.stringify, stableJson, templates) sees
 * the value: a tool schema nested 200k deep would otherwise overflow the stack in any of them.
 * A string is skipped with `indexOf` to its closing quote (one not escaped: an even run of
 * backslashes before it): a request is mostly strings, and the native search runs several times
 * faster than a loop over their characters (the proxy scans every body).
 */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const open = i;
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return max; // unterminated: the rest is inside the string
        let k = i - 1;
        while (k > open && text.charCodeAt(k) === 92 /* \ */) k--;
        if ((i - 1 - k) % 2 === 0) break;
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) { if (++depth > max) max = depth; }
    else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return max;
}

/**
 * How deeply a parsed value nests arrays and objects, by a walk with a stack of its own (never
 * the call stack), stopping as soon as it passes `limit`: what a value handed over by a library
 * caller is checked with, where no JSON text was scanned. Returns `limit + 1` when it is deeper.
 */
export function valueNestingDepth(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  const stack: [unknown, number][] = [[value, 1]];
  let max = 0;
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > limit) return limit + 1;
    if (depth > max) max = depth;
    const children = Array.isArray(v) ? v : Object.values(v as object);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, depth + 1]);
  }
  return max;
}
