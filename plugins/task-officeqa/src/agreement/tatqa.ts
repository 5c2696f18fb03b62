/**
 * TAT-QA answer keys (github.com/NExTplusplus/TAT-QA, CC BY 4.0) as OfficeQA gold answers.
 * A key is a span, several spans, or a number, with a scale ("", thousand, million, billion,
 * percent) the question's table states.
 */

/** One TAT-QA question as vendored: its answer key and scale. */
export interface TatQaQuestion {
  uid: string;
  question: string;
  answer: string | number | (string | number)[];
  answer_type: 'span' | 'multi-span' | 'arithmetic' | 'count';
  scale: '' | 'thousand' | 'million' | 'billion' | 'percent';
}

/** A number read from a key, by the key's own conventions: `$`, commas, `(9.8)` negative, `%`. */
export interface KeyNumber { value: number; decimals: number }

/** The number a key span states, or undefined for a text span. */
export function keyNumber(span: string): KeyNumber | undefined {
  const m = /^\s*(-)?\$?\s*(\()?\s*\$?\s*(-)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(\))?\s*%?\s*$/.exec(span);
  if (!m) return undefined;
  const negative = Boolean(m[1] || m[3] || (m[2] && m[6]));
  const value = Number(`${m[4]!.replace(/,/g, '')}${m[5] ?? ''}`);
  return { value: negative ? -value : value, decimals: m[5] ? m[5].length - 1 : 0 };
}

/** The spans of a key as strings (an arithmetic or count key is one span). */
export function keySpans(q: TatQaQuestion): string[] {
  return Array.isArray(q.answer) ? q.answer.map(String) : [String(q.answer)];
}

/** One span with its scale, as OfficeQA's CSV writes a gold: "1,496.5 million", "2.61%", "Greece". */
export function spanGold(span: string, scale: TatQaQuestion['scale']): string {
  const s = span.trim();
  if (!keyNumber(s) || !scale) return s;
  if (scale === 'percent') return s.endsWith('%') ? s : `${s}%`;
  return `${s} ${scale}`;
}

/**
 * The gold of a question in the OfficeQA CSV's answer column: spans joined by ", " (a JSON
 * list when a span itself holds ", ").
 */
export function officeqaGold(q: TatQaQuestion): string {
  const spans = keySpans(q).map((s) => spanGold(s, q.scale));
  if (spans.length === 1) return spans[0]!;
  return spans.some((s) => /,\s|;|\band\b/.test(s)) ? JSON.stringify(spans) : spans.join(', ');
}
