/**
 * How deeply `text` nests `[`/`{`, found by one scan without parsing (brackets inside strings
 * do not count). Checked before anything recursive (JSON.stringify, stableJson, templates) sees
 * the value: a tool schema nested 200k deep would otherwise overflow the stack in any of them.
 */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) { if (++depth > max) max = depth; }
    else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return max;
}
