/** Text normalisations of answers: OfficeQA's own, and the SQuAD/TAT-QA one used as an extension. */
import { SCALE_WORDS } from './numbers';

/**
 * OfficeQA's text rule (reward.py): lower case, outer quotes dropped, parenthetical
 * asides dropped ("(OASI)"), whitespace collapsed.
 */
export function officeqaText(text: string): string {
  return text.trim().toLowerCase().replace(/^["']+|["']+$/g, '').replace(/\([^)]*\)/g, '').replace(/\s+/g, ' ').trim();
}

/**
 * The normalisation TAT-QA's and SQuAD's scorers use: lower case, punctuation and the articles
 * a/an/the dropped, whitespace collapsed.
 */
export function normalizeText(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, ' ').replace(/\b(the|a|an)\b/g, ' ').replace(/\s+/g, ' ').trim();
}

const UNIT_WORDS = new Set([...Object.keys(SCALE_WORDS), 'hundred', 'hundreds', 'percent', 'percentage', 'per', 'cent']);

/**
 * The words of an answer besides its numbers, scale and percent words, as OfficeQA's
 * `has_significant_text` keeps them: "March 1977" → "march", "543 million" → "".
 */
export function significantText(text: string, numberSpans: { start: number; end: number }[]): string {
  let rest = '';
  let at = 0;
  for (const s of numberSpans) { rest += `${text.slice(at, s.start)} `; at = s.end; }
  rest += text.slice(at);
  const words = rest.toLowerCase().replace(/[^\p{L}\p{N}\s]/gu, ' ').split(/\s+/).filter((w) => w && !UNIT_WORDS.has(w));
  const joined = words.join(' ');
  return joined.length >= 2 ? joined : '';
}
