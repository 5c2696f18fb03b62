/**
 * Numbers as answers write them: thousands separators, currency, signs (ASCII or Unicode minus),
 * accounting negatives `(97)`, percent, scale words (singular or plural) and number words.
 */

/** The scale words read after a number, with their factor. */
export const SCALE_WORDS: Record<string, number> = {
  thousand: 1e3, thousands: 1e3, k: 1e3,
  million: 1e6, millions: 1e6, mn: 1e6, m: 1e6,
  billion: 1e9, billions: 1e9, bn: 1e9, b: 1e9,
  trillion: 1e12, trillions: 1e12, tn: 1e12,
};

/** One number written in an answer. */
export interface NumberMention {
  /** The number as written, sign applied, scale word not applied (OfficeQA compares these "base" numbers). */
  value: number;
  /** Digits after the decimal point as written: the precision of a gold answer. */
  decimals: number;
  /** The scale word after it, as a canonical word and its factor. */
  scale?: { word: 'thousand' | 'million' | 'billion' | 'trillion'; factor: number };
  percent: boolean;
  /** Written with a currency symbol or a thousands separator: never read as a year. */
  money: boolean;
  /** Where it was written, [start, end) in the text it was read from. */
  start: number;
  end: number;
}

const CANONICAL: Record<number, 'thousand' | 'million' | 'billion' | 'trillion'> = { 1e3: 'thousand', 1e6: 'million', 1e9: 'billion', 1e12: 'trillion' };

// A thousands-separated number only when every group has three digits (so `25,28` is two numbers,
// `99,999` one), as OfficeQA's reward.py reads them.
const NUMBER = new RegExp(
  String.raw`(?<open>\(\s*)?(?<neg>[-\u2212\u2013]\s*)?(?<cur>[$£€¥₹¢]\s*)?(?<neg2>[-\u2212]\s*)?` +
  String.raw`(?<num>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)` +
  String.raw`(?<pct>\s*(?:%|per\s?cent\b))?` +
  String.raw`(?<scale>\s*(?:thousands?|millions?|billions?|trillions?|mn|bn|tn|k|m|b)\b)?` +
  String.raw`(?<pct2>\s*(?:%|per\s?cent\b))?(?<close>\s*\))?` +
  // "(97) thousand", "(22.2)%": the scale or percent after an accounting parenthesis.
  String.raw`(?<after>\s*(?:%|per\s?cent\b|(?:thousands?|millions?|billions?|trillions?|mn|bn|tn)\b))?`,
  'gi',
);

/** True when a mention can be a calendar year: a bare whole number from 1900 to 2100. */
export function isYearLike(m: NumberMention): boolean {
  return !m.money && !m.percent && !m.scale && m.decimals === 0 && m.value >= 1900 && m.value <= 2100;
}

/** Every number of `src`, left to right (number words are not read: see {@link wordsToDigits}). */
export function readNumbers(src: string): NumberMention[] {
  const out: NumberMention[] = [];
  for (const m of src.matchAll(NUMBER)) {
    const g = m.groups!;
    const raw = g.num!.replace(/,/g, '');
    let value = Number(raw);
    const before = src[m.index! - 1] ?? ' ';
    // A dash right after a letter or digit joins a range or a code ("2018-2019", "FY-20"), it is no sign.
    const signed = Boolean(g.neg2) || (Boolean(g.neg) && !/[\p{L}\p{N}]/u.test(before));
    const accounting = Boolean(g.open && g.close);
    // A scale word or percent after the closing parenthesis belongs to the number: "(97) thousand".
    const after = accounting ? g.after?.trim().toLowerCase() : undefined;
    const scaleWord = g.scale?.trim().toLowerCase() ?? (after && SCALE_WORDS[after] ? after : undefined);
    const mention: NumberMention = {
      value, decimals: raw.includes('.') ? raw.split('.')[1]!.length : 0,
      percent: Boolean(g.pct || g.pct2 || (after && !SCALE_WORDS[after])),
      money: Boolean(g.cur) || g.num!.includes(','),
      start: m.index! + (g.open?.length ?? 0),
      end: m.index! + m[0].length - (after ? 0 : (g.close?.length ?? 0) + (g.after?.length ?? 0)),
    };
    if (scaleWord) {
      const factor = SCALE_WORDS[scaleWord]!;
      mention.scale = { word: CANONICAL[factor]!, factor };
    }
    // OfficeQA keeps "(2019)" a year: parentheses negate only what is not a bare year.
    if (accounting && isYearLike(mention)) { out.push(mention); continue; }
    if (signed || accounting) value = -value;
    mention.value = value === 0 ? 0 : value;
    out.push(mention);
  }
  return out;
}

const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve',
  'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const WORD_VALUE = new Map<string, number>([...UNITS.map((w, i) => [w, i] as const), ...TENS.map((w, i) => [w, i * 10] as const).filter(([w]) => w)]);
const ONES = UNITS.slice(1, 10).join('|');
const SMALL = UNITS.join('|');
const TENS_RE = TENS.filter(Boolean).join('|');
const BELOW_100 = `(?:(?:${TENS_RE})(?:[\\s-]+(?:${ONES}))?|${SMALL})`;
// "five", "twenty-one", "two hundred and five": "and" joins only after "hundred", so
// "twenty-one and three" stays two numbers.
const RUN = new RegExp(String.raw`\b${BELOW_100}(?:\s+hundred(?:(?:\s+and)?\s+${BELOW_100})?)?\b`, 'gi');

/**
 * Number words written as digits: "two" → "2", "twenty-five" → "25", "one hundred and five"
 * → "105". Scale words after them stay ("three million" → "3 million") and are read as scale.
 */
export function wordsToDigits(text: string): string {
  return text.replace(RUN, (run) => {
    let total = 0;
    for (const w of run.toLowerCase().split(/[\s-]+/)) {
      if (w === 'and') continue;
      if (w === 'hundred') total = (total || 1) * 100;
      else total += WORD_VALUE.get(w)!;
    }
    return String(total);
  });
}
