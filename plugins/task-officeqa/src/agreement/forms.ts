/**
 * Answer forms for the agreement table, made from the answer key by rules that do not consult
 * the matcher: the ways models write a right answer, and wrong answers (near misses,
 * neighbouring years, rounding-level misses, wrong scale or sign, partial or padded lists).
 */
import { keyNumber, keySpans, officeqaGold, spanGold, type KeyNumber, type TatQaQuestion } from './tatqa';

/** One answer to grade: what was written, and whether it is right by construction. */
export interface AnswerForm { kind: string; text: string; right: boolean }

const FACTOR = { thousand: 1e3, million: 1e6, billion: 1e9 } as const;
const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen',
  'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];

const commas = (x: number, d: number) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d, useGrouping: true });
const plain = (x: number, d: number) => x.toFixed(d);
const yearOf = (question: string) => /\b(19\d\d|20\d\d)\b/.exec(question)?.[1];
const isYear = (n: KeyNumber) => n.decimals === 0 && n.value >= 1900 && n.value <= 2100;
/** Two values equal as written at `d` decimals. */
const sameAt = (a: number, b: number, d: number) => plain(a, d) === plain(b, d);

/** A number with the question's scale: "12.6 million", "2.61%", "4". */
function withScale(text: string, scale: TatQaQuestion['scale']): string {
  if (scale === 'percent') return `${text}%`;
  return scale ? `${text} ${scale}` : text;
}

function numericForms(n: KeyNumber, scale: TatQaQuestion['scale'], gold: string, question: string): AnswerForm[] {
  const { value: v, decimals: d } = n;
  const out: AnswerForm[] = [];
  const right = (kind: string, text: string) => out.push({ kind, text, right: true });
  const wrong = (kind: string, text: string) => out.push({ kind, text, right: false });
  right('gold as written', gold);
  right('thousands separators', withScale(commas(v, d), scale));
  right('no separators', withScale(plain(v, d), scale));
  if (d > 0) right('more digits that round to the gold', withScale(plain(v + Math.sign(v || 1) * 0.4 * 10 ** -d, d + 1), scale));
  if (scale in FACTOR) {
    const f = FACTOR[scale as keyof typeof FACTOR];
    right('plural scale word', `${commas(v, d)} ${scale}s`);
    right('bare number in the table\'s unit', commas(v, d));
    right('full amount', commas(v * f, Math.max(0, d - Math.log10(f))));
    if (scale === 'billion') right('another scale word', `${commas(v * 1000, Math.max(0, d - 3))} million`);
    else right('another scale word', `${plain(v / 1000, d + 3)} ${scale === 'thousand' ? 'million' : 'billion'}`);
    right('currency', `${v < 0 ? '-' : ''}$${commas(Math.abs(v), d)} ${scale}`);
  }
  if (scale === 'percent') {
    right('percent word', `${plain(v, d)} percent`);
    right('percent without its sign', plain(v, d));
    right('percent as a fraction', plain(v / 100, d + 2));
  }
  if (v < 0) {
    right('accounting negative', scale === 'percent' ? `(${plain(-v, d)}%)` : withScale(`(${commas(-v, d)})`, scale));
    right('Unicode minus', withScale(`\u2212${commas(-v, d)}`, scale));
  }
  if (scale === '' && d === 0 && v >= 0 && v <= 20) right('number word', WORDS[v]!);
  const year = yearOf(question) ?? '2019';
  right('a sentence with a year before the value', `In ${year} the value was ${gold}.`);

  // Wrong: different answers at the precision the key states.
  for (const [kind, x] of [['near miss +0.8%', v * 1.008], ['near miss -0.8%', v * 0.992]] as const) {
    if (!sameAt(x, v, d)) wrong(kind, withScale(commas(x, d), scale));
  }
  wrong('one unit off in the last digit', withScale(commas(v + 10 ** -d, d), scale));
  wrong('one unit off the other way', withScale(commas(v - 10 ** -d, d), scale));
  if (d > 0 && !sameAt(Number(plain(v, d - 1)), v, d)) wrong('rounding-level miss', withScale(plain(v, d - 1), scale));
  if (isYear(n)) { wrong('neighbouring year', String(v - 1)); wrong('neighbouring year', String(v + 1)); }
  if (yearOf(question) && Number(yearOf(question)) !== v) wrong('the question\'s year instead of the value', yearOf(question)!);
  if (v !== 0) wrong('sign flipped', withScale(commas(-v, d), scale));
  if (scale in FACTOR) wrong('wrong scale word', `${commas(v, d)} ${scale === 'thousand' ? 'million' : 'thousand'}`);
  if (scale === 'percent' && v !== 0) wrong('percent times 100', plain(v * 100, d));
  if (v !== 0) wrong('decimal point shifted', withScale(commas(v * 10, d), scale));
  const digits = plain(Math.abs(v), d);
  const swapAt = digits.search(/(\d)(?!\1)\d/);
  if (swapAt >= 0) {
    const swapped = `${v < 0 ? '-' : ''}${digits.slice(0, swapAt)}${digits[swapAt + 1]}${digits[swapAt]}${digits.slice(swapAt + 2)}`;
    if (Number(swapped) !== v) wrong('two digits transposed', withScale(swapped, scale));
  }
  const off = v * 1.008;
  if (!sameAt(off, v, d)) wrong('a sentence with the year and a near miss', `In ${year} the value was ${withScale(commas(off, d), scale)}.`);
  wrong('hedged between two answers', `${gold} or ${withScale(commas(v + 10 ** -d, d), scale)}`);
  return out;
}

function textForms(gold: string, others: string[]): AnswerForm[] {
  const out: AnswerForm[] = [
    { kind: 'gold as written', text: gold, right: true },
    { kind: 'upper case', text: gold.toUpperCase(), right: true },
    { kind: 'lower case', text: gold.toLowerCase(), right: true },
    { kind: 'trailing period', text: `${gold.replace(/\.$/, '')}.`, right: true },
    { kind: 'quoted', text: `"${gold}"`, right: true },
  ];
  if (!/^the\b/i.test(gold)) out.push({ kind: 'with "The"', text: `The ${gold}`, right: true });
  const other = others.find((o) => o.toLowerCase().trim() !== gold.toLowerCase().trim());
  if (other) {
    out.push({ kind: 'another question\'s answer', text: other, right: false });
    out.push({ kind: 'hedged between two answers', text: `${gold} or ${other}`, right: false });
  }
  const words = gold.split(/\s+/);
  if (words.length >= 3) out.push({ kind: 'partial span', text: words.slice(0, Math.ceil(words.length / 2)).join(' '), right: false });
  return out;
}

function listForms(spans: string[], scale: TatQaQuestion['scale'], others: string[]): AnswerForm[] {
  const golds = spans.map((s) => spanGold(s, scale));
  const numbers = spans.map(keyNumber);
  const andJoin = (xs: string[]) => `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
  const out: AnswerForm[] = [
    { kind: 'list as written', text: golds.join(', '), right: true },
    { kind: 'list in another order', text: [...golds].reverse().join(', '), right: true },
    { kind: 'list joined with "and"', text: andJoin(golds), right: true },
    { kind: 'list as JSON', text: JSON.stringify(golds), right: true },
    { kind: 'list without its last item', text: golds.slice(0, -1).join(', '), right: false },
    { kind: 'list without its first item', text: golds.slice(1).join(', '), right: false },
  ];
  if (scale in FACTOR && numbers.every(Boolean)) {
    out.push({ kind: 'list of bare numbers in the table\'s unit', text: numbers.map((n) => commas(n!.value, n!.decimals)).join('; '), right: true });
  }
  const last = numbers[numbers.length - 1];
  if (numbers.every(Boolean) && last) {
    const off = last.value * 1.008;
    const miss = sameAt(off, last.value, last.decimals) ? last.value + 10 ** -last.decimals : off;
    const missText = spanGold(commas(miss, last.decimals), scale);
    out.push({ kind: 'list with one near miss', text: [...golds.slice(0, -1), missText].join(', '), right: false });
    out.push({ kind: 'list with an extra item', text: [...golds, missText].join(', '), right: false });
  } else {
    const other = others.find((o) => !golds.some((g) => g.toLowerCase() === o.toLowerCase()));
    if (other) {
      out.push({ kind: 'list with an extra item', text: [...golds, other].join(', '), right: false });
      out.push({ kind: 'list with one item replaced', text: [...golds.slice(0, -1), other].join(', '), right: false });
    }
  }
  return out;
}

/**
 * The right and wrong answer forms of one question. `others` are text answers of other
 * questions, for wrong answers that are real spans from the same kind of report.
 */
export function answerForms(q: TatQaQuestion, others: string[]): AnswerForm[] {
  const spans = keySpans(q);
  const gold = officeqaGold(q);
  let forms: AnswerForm[];
  if (spans.length > 1) forms = listForms(spans, q.scale, others);
  else {
    const n = keyNumber(spans[0]!);
    forms = n ? numericForms(n, q.scale, gold, q.question) : textForms(gold, others);
  }
  // A model's whole reply: reasoning, then the tagged answer.
  forms.push({ kind: 'a full reply with the answer tag', text: `From the table, the figure is computed as asked.\n<FINAL_ANSWER>${forms[0]!.text}</FINAL_ANSWER>`, right: true });
  const seen = new Set<string>();
  return forms.filter((f) => {
    const key = `${f.right}:${f.text}`;
    if (seen.has(key) || (!f.right && f.text.trim().toLowerCase() === gold.trim().toLowerCase())) return false;
    seen.add(key);
    return true;
  });
}
