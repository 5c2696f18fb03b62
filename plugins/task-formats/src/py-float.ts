/**
 * Python's `str.splitlines()`, `str.strip()` and `float(str)`, for reading a score the way a
 * Python runner reads it (ClawGym-RL's `_parse_reward_stdout`): the same lines, the same
 * whitespace, the same accepted spellings (`1_000`, `.5`, `5.`, `1e-3`, `inf`, `nan`).
 * Python also accepts non-ASCII decimal digits in `float()`; this reads ASCII digits only.
 */

/** Characters Python's `str.strip()` removes (`str.isspace()`). */
const PY_SPACE = ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';
const stripper = (chars: string) => new RegExp(`^[${chars}]+|[${chars}]+$`, 'g');
const STRIP = stripper(PY_SPACE);

/** Python's line boundaries: `\r\n` first, then each single one. */
const LINE_BREAK = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** `text.splitlines()` as Python splits it (no trailing empty line after a final break). */
export function pySplitLines(text: string): string[] {
  const lines = text.split(LINE_BREAK);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** `text.strip()` as Python strips it. */
export const pyStrip = (text: string): string => text.replace(STRIP, '');

/** What `float()` itself strips: Python's whitespace but the four separators \x1c-\x1f. */
const FLOAT_STRIP = stripper(PY_SPACE.replace(/[\x1c-\x1f]/g, ''));

const DIGITS = '\\d(?:_?\\d)*';
const PY_FLOAT = new RegExp(`^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`, 'i');

/** `float(text)` as Python computes it (ASCII digits), or undefined where Python raises ValueError. */
export function pyFloat(text: string): number | undefined {
  const t = text.replace(FLOAT_STRIP, '');
  if (!PY_FLOAT.test(t)) return undefined;
  const bare = t.replace(/_/g, '').toLowerCase();
  const sign = bare.startsWith('-') ? -1 : 1;
  const body = bare.replace(/^[+-]/, '');
  if (body === 'nan') return Number.NaN;
  if (body === 'inf' || body === 'infinity') return sign * Infinity;
  return Number(bare);
}
