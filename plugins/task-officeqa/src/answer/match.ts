/**
 * Does an answer match the gold? OfficeQA's rule (databricks/officeqa reward.py, `score_answer`),
 * with the extensions argued in docs/verifiers.md. Every decision says why in `reason`.
 */
import { isYearLike, readNumbers, wordsToDigits, type NumberMention } from './numbers';
import { normalizeText, officeqaText, significantText } from './text';

/** Options of {@link matchAnswer}. */
export interface MatchOptions {
  /**
   * reward.py's `tolerance`: a relative error accepted on numbers. Default 0, reward.py's own
   * default: numbers must be equal at the gold's precision.
   */
  relativeTolerance?: number;
}

/** A decision and the reason for it. */
export interface MatchResult { match: boolean; reason: string }

const yes = (reason: string): MatchResult => ({ match: true, reason });
const no = (reason: string): MatchResult => ({ match: false, reason });

/** Is `v` the gold number `g`: exact for whole numbers, equal after rounding to the gold's decimals otherwise. */
function closeTo(g: NumberMention, v: number, tolerance: number): boolean {
  const eps = 1e-9 * Math.max(1, Math.abs(g.value));
  if (tolerance > 0 && g.value !== 0 && Math.abs(v - g.value) / Math.abs(g.value) <= tolerance + 1e-12) return true;
  if (g.decimals === 0) return Math.abs(v - g.value) <= eps;
  const f = 10 ** g.decimals;
  // Half away from zero, with a nudge for binary fractions (35.85 * 10 = 358.4999…).
  const rounded = (Math.sign(v) * Math.round(Math.abs(v) * f + 1e-7)) / f;
  return Math.abs(rounded - g.value) <= eps;
}

/**
 * The values `p` can stand for in the gold's terms. reward.py compares the numbers as written
 * when either side has no scale word ("543" for "543 million"); we also take the full amount
 * ("543000000"), other scale words converted ("0.543 billion"), and a fraction for a percentage.
 */
function candidates(g: NumberMention, p: NumberMention): number[] {
  const out: number[] = [];
  if (g.scale && p.scale) out.push((p.value * p.scale.factor) / g.scale.factor);
  else if (g.scale) out.push(p.value, p.value / g.scale.factor);
  else if (p.scale) out.push(p.value, p.value * p.scale.factor);
  else out.push(p.value);
  if (g.percent && !p.percent && !p.scale) out.push(p.value * 100);
  return out;
}

/** Do two numbers agree (see {@link candidates} and {@link closeTo})? */
export function numbersAgree(g: NumberMention, p: NumberMention, tolerance = 0): boolean {
  return candidates(g, p).some((v) => closeTo(g, v, tolerance));
}

/** A one-to-one pairing of `golds` with `preds` under `agree` (every gold used once, nothing left over). */
function pairs<G, P>(golds: G[], preds: P[], agree: (g: G, p: P) => boolean): boolean {
  if (golds.length !== preds.length) return false;
  const used = new Array<boolean>(preds.length).fill(false);
  const go = (i: number): boolean => {
    if (i === golds.length) return true;
    for (let j = 0; j < preds.length; j++) {
      if (!used[j] && agree(golds[i]!, preds[j]!)) {
        used[j] = true;
        if (go(i + 1)) return true;
        used[j] = false;
      }
    }
    return false;
  };
  return go(0);
}

/** The body of an OfficeQA bracketed list `[a, b]` (not a JSON array of strings), when the answer is one. */
function bracketBody(text: string): string | undefined {
  const t = text.replace(/\s+/g, ' ').trim();
  const all = [...t.matchAll(/\[([^[\]]+)\]/g)];
  if (all.length !== 1) return undefined;
  const outside = t.slice(0, all[0]!.index) + t.slice(all[0]!.index! + all[0]![0].length);
  if (/\d/.test(outside) || jsonList(t)) return undefined;
  return all[0]![1]!;
}

/**
 * A JSON array of strings (how a multi-span gold is written when a span holds a comma). An array
 * of bare numbers is OfficeQA's bracketed list, which is ordered.
 */
function jsonList(text: string): string[] | undefined {
  const t = text.trim();
  if (!t.startsWith('[') || !t.endsWith(']')) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v as string[];
  } catch { /* not JSON */ }
  return undefined;
}

const PLAIN_ITEM = /^\s*-?[$£€]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?\s*$/;

/**
 * The ways a bracketed body splits into `n` plain numbers at its commas (reward.py: `[8,152,260]`
 * can be the two items 8 and 152,260). An item may not hold a comma next to a space.
 */
function segmentations(body: string, n: number): NumberMention[][] {
  const chunks = body.split(',');
  const out: NumberMention[][] = [];
  const go = (i: number, left: number, acc: NumberMention[]) => {
    if (out.length > 50) return;
    if (left === 0) { if (i === chunks.length) out.push(acc); return; }
    for (let j = i + 1; j <= chunks.length - left + 1; j++) {
      const item = chunks.slice(i, j).join(',');
      if (j - i > 1 && /\s,|,\s/.test(item)) break;
      if (!PLAIN_ITEM.test(item)) continue;
      const read = readNumbers(item.trim());
      if (read.length === 1) go(j, left - 1, [...acc, read[0]!]);
    }
  };
  go(0, n, []);
  return out;
}

interface Reading { text: string; numbers: NumberMention[]; words: string }

function reading(text: string, numberWords: boolean): Reading {
  const t = (numberWords ? wordsToDigits(text) : text).replace(/\s+/g, ' ').trim();
  const numbers = readNumbers(t);
  return { text: t, numbers, words: significantText(t, numbers) };
}

/** reward.py's comparison of one whole answer with one whole gold. */
function matchWhole(predicted: string, gold: string, tolerance: number): MatchResult {
  const g = reading(gold, false);
  if (g.numbers.length === 0) {
    if (readNumbers(predicted).length) return no('the gold is text, the answer has numbers');
    if (officeqaText(predicted) === officeqaText(gold)) return yes('same text');
    // Extension: TAT-QA's normalisation (punctuation and articles) for text answers.
    if (normalizeText(predicted) && normalizeText(predicted) === normalizeText(gold)) return yes('same text after punctuation and articles');
    return no(`text "${predicted}" is not "${gold}"`);
  }
  const p = reading(predicted, true);
  // As reward.py: a gold is "a year" by its value alone (1900 to 2100, whole), whatever its unit.
  const yearValued = (n: NumberMention) => Number.isInteger(n.value) && n.value >= 1900 && n.value <= 2100;
  const goldYear = g.numbers.length === 1 ? yearValued(g.numbers[0]!) || g.words !== '' : g.numbers.some(yearValued);
  // reward.py drops years from the answer unless the gold is a year or has words ("March 1977"):
  // "In 2019 the value is 12,682" answers 12,682.
  const numbers = goldYear ? p.numbers : p.numbers.filter((n) => !isYearLike(n));
  if (g.words) {
    if (!p.words) return no(`the gold has the words "${g.words}", the answer has none`);
    if (!p.words.includes(g.words) && !g.words.includes(p.words)) return no(`words "${p.words}" are not "${g.words}"`);
  }
  const body = g.numbers.length >= 2 ? bracketBody(gold) : undefined;
  if (body !== undefined) {
    // reward.py: a bracketed list is ordered.
    const ordered = (items: NumberMention[]) => items.length === g.numbers.length && g.numbers.every((gn, i) => numbersAgree(gn, items[i]!, tolerance));
    const predBody = bracketBody(predicted) ?? p.text;
    if (segmentations(predBody, g.numbers.length).some(ordered) || ordered(numbers)) return yes(`the ${g.numbers.length} listed numbers, in order`);
    return no(`the list [${g.numbers.map((n) => n.value).join(', ')}] is not matched in order`);
  }
  if (numbers.length !== g.numbers.length) {
    return no(`expected ${g.numbers.length} number${g.numbers.length > 1 ? 's' : ''}, found ${numbers.length}${numbers.length ? ` (${numbers.map((n) => n.value).join(', ')})` : ''}`);
  }
  if (pairs(g.numbers, numbers, (gn, pn) => numbersAgree(gn, pn, tolerance))) return yes(g.numbers.length > 1 ? `all ${g.numbers.length} numbers` : 'same number');
  return no(`${numbers.map((n) => n.value).join(', ')} does not match ${g.numbers.map((n) => `${n.value}${n.scale ? ` ${n.scale.word}` : ''}${n.percent ? '%' : ''}`).join(', ')}`);
}

const SEPARATOR = /(\s*;\s*|,\s+and\s+|,\s+|\s+and\s+|\s*&\s*)/;

/** The parts of a multi-span answer: a JSON list, or spans separated by `;`, `, `, ` and `. */
export function splitSpans(text: string): string[] {
  return jsonList(text) ?? text.split(SEPARATOR).filter((_, i) => i % 2 === 0).map((s) => s.trim()).filter(Boolean);
}

/**
 * Can `predicted` be cut at its separators into exactly the gold's parts, one to one? A span
 * may itself hold a separator ("Licence and spectrum payments"), so every way of cutting is tried.
 */
function matchParts(predicted: string, goldParts: string[], agree: (part: string, gold: string) => boolean): boolean {
  const listed = jsonList(predicted);
  if (listed) return pairs(goldParts, listed, (g, q) => agree(q, g));
  const pieces = predicted.split(SEPARATOR);
  const words = pieces.filter((_, i) => i % 2 === 0);
  const used = new Array<boolean>(goldParts.length).fill(false);
  let tries = 0;
  const go = (start: number, left: number): boolean => {
    if (start === words.length) return left === 0;
    if (left === 0 || ++tries > 5000) return false;
    for (let end = start; end < words.length; end++) {
      const part = pieces.slice(2 * start, 2 * end + 1).join('').trim();
      for (let k = 0; k < goldParts.length; k++) {
        if (used[k] || !agree(part, goldParts[k]!)) continue;
        used[k] = true;
        if (go(end + 1, left - 1)) return true;
        used[k] = false;
      }
    }
    return false;
  };
  return go(0, goldParts.length);
}

/**
 * Does `predicted` (the text inside the answer tag) answer `gold`? reward.py's direct-answer
 * guard first (one line, at most 250 characters, no markup), then its comparison; a multi-span
 * gold also matches as a set (every span, any order, nothing extra).
 */
export function matchAnswer(predicted: string, gold: string, options: MatchOptions = {}): MatchResult {
  const tolerance = options.relativeTolerance ?? 0;
  const p = predicted.replace(/\u00a0/g, ' ').trim();
  if (!p) return no('the answer is empty');
  if (/unable to determine/i.test(p)) return no('the answer says it is unable to determine');
  if (p.split(/\r?\n/).filter((l) => l.trim()).length > 1) return no('the answer spans several lines: give the answer alone');
  if (p.length > 250) return no('the answer is longer than 250 characters: give the answer alone');
  if (/<[^>]*>/.test(p)) return no('the answer holds markup');
  // Extension: a hedge ("X or Y") is no answer, even where the gold's number or words are in it.
  if (/\bor\b/i.test(p) && !/\bor\b/i.test(gold)) return no('the answer offers alternatives ("or"): give one answer');
  const whole = matchWhole(p, gold, tolerance);
  if (whole.match) return whole;
  const goldParts = bracketBody(gold) === undefined ? splitSpans(gold) : [];
  if (goldParts.length < 2) return whole;
  if (matchParts(p, goldParts, (q, g) => matchWhole(q, g, tolerance).match)) return yes(`all ${goldParts.length} parts, in any order`);
  const predParts = splitSpans(p);
  if (predParts.length < goldParts.length) return no(`expected ${goldParts.length} parts (${goldParts.join(' | ')}), found ${predParts.length}`);
  return no(`the parts ${predParts.join(' | ')} do not match ${goldParts.join(' | ')} one to one`);
}
