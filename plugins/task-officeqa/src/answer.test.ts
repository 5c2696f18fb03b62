import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureCases } from '@clawgym/core/testing';
import { answersMatch, extractFinalAnswer, matchAnswer, readNumbers, wordsToDigits } from './answer';

interface Input { response: string; gold: string }
interface Expected { match: boolean }

/** The verifier's decision for a full response: tags first, then the comparison. */
const decide = ({ response, gold }: Input): Expected => {
  const answer = extractFinalAnswer(response);
  return { match: answer !== undefined && answer.length > 0 && answersMatch(answer, gold) };
};

describe('officeqa answer matching (fixtures)', () => {
  for (const c of fixtureCases<Input, Expected>(join(__dirname, '__fixtures__', 'answers'))) {
    it(c.name, () => {
      const actual = decide(c.input);
      expect(actual).toEqual(c.check(actual));
    });
  }
});

interface RewardExample { from: string; gold: string; predicted: string; tolerance: number; match: boolean }
const REWARD = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'officeqa-reward', 'examples.json'), 'utf8')) as { cases: RewardExample[] };

describe("the examples OfficeQA's reward.py and README ship", () => {
  it.each(REWARD.cases.map((c) => [c.from, c] as const))('%s', (_, c) => {
    expect(matchAnswer(c.predicted, c.gold, { relativeTolerance: c.tolerance })).toMatchObject({ match: c.match });
  });
});

/**
 * Each mismatch issue 21 lists, as it was found: a wrong answer accepted or a right one refused
 * by the matcher this replaced (1% relative tolerance, first number only, ordered text spans).
 */
const MISMATCHES: [string, string, string, boolean][] = [
  ['a near miss 0.8% off is wrong', '1244.4 million', '1234.5 million', false],
  ['a near miss 0.8% off, the other way', '2427.4', '2447', false],
  ['the neighbouring year 2016 for 2017 is wrong', '2016', '2017', false],
  ['the year 2007 for 2017 is wrong', '2007', '2017', false],
  ['a rounding-level miss of a decimal gold is wrong', '35.8%', '35.9%', false],
  ['multi-span: a wrong second number is wrong', '25, 99,999', '25, 28', false],
  ['multi-span: a partial list is wrong', '25', '25, 28', false],
  ['multi-span: an extra item is wrong', '25, 28, 31', '25, 28', false],
  ['multi-span: numbers in another order are right', '28, 25', '25, 28', true],
  ['multi-span: text spans in another order are right', 'Webzone, Digital', 'Digital, Webzone', true],
  ['multi-span: text spans joined with "and" are right', 'Webzone and Digital', 'Digital, Webzone', true],
  ['multi-span: a missing text span is wrong', 'Digital', 'Digital, Webzone', false],
  ['multi-span: an extra text span is wrong', 'Digital, Webzone, Cloud', 'Digital, Webzone', false],
  ['a bare number is right when the table is in thousands', '2447', '2447 thousand', true],
  ['a plural scale word is right', '2,447 thousands', '2447 thousand', true],
  ['the full amount is right', '2,447,000', '2447 thousand', true],
  ['another scale word for the same amount is right', '2.447 million', '2447 thousand', true],
  ['a wrong scale word is wrong', '2447 million', '2447 thousand', false],
  ['a percentage without its sign is right', '2.61', '2.61%', true],
  ['a percentage as a fraction is right', '0.0261', '2.61%', true],
  ['a percentage spelled "percent" is right', '2.61 percent', '2.61%', true],
  ['a percentage 100 times too large is wrong', '261', '2.61%', false],
  ['an accounting negative with scale is right', '(97) thousand', '-97 thousand', true],
  ['an accounting negative with currency is right', '$(97)', '-97', true],
  ['a positive number for a negative gold is wrong', '97 thousand', '-97 thousand', false],
  ['an accounting negative with the wrong scale is wrong', '(97) million', '-97 thousand', false],
  ['an accounting negative percentage is right', '(22.22)%', '-22.22%', true],
  ['a number word is right', 'two', '2', true],
  ['a hyphenated number word is right', 'twenty-five', '25', true],
  ['a wrong number word is wrong', 'three', '2', false],
  ['a sentence: the value, not the year before it', 'In 2019 the value is 12,682.', '12,682', true],
  ['a sentence with the wrong value is wrong', 'In 2019 the value is 12,683.', '12,682', false],
  ['a year gold is still read from a sentence', 'The peak was in 2017.', '2017', true],
];

describe('the mismatches of issue 21, each a case', () => {
  it.each(MISMATCHES)('%s: "%s" for gold "%s"', (_, predicted, gold, match) => {
    expect(matchAnswer(predicted, gold)).toMatchObject({ match });
  });

  it('the final answer is the last tag; nothing outside it counts', () => {
    expect(extractFinalAnswer('draft <FINAL_ANSWER>2016</FINAL_ANSWER> then <FINAL_ANSWER>2017</FINAL_ANSWER>')).toBe('2017');
    expect(extractFinalAnswer('The answer is 2017.')).toBeUndefined();
  });

  it('says why it refused', () => {
    expect(matchAnswer('25', '25, 28').reason).toBe('expected 2 parts (25 | 28), found 1');
    expect(matchAnswer('2016', '2017').reason).toBe('2016 does not match 2017');
  });
});

/** ClawGym's extensions of reward.py (docs/verifiers.md), each a case. */
const EXTENSIONS: [string, string, string, boolean][] = [
  ['more digits that round to the gold', '2.6149', '2.61%', true],
  ['whole-number golds are exact', '2447.4', '2447', false],
  ['a 0.8% miss fails by default', '2427.4', '2447', false],
  ['numbers pair one to one', '25, 30', '25, 25', false],
  ['a hedge is refused', '$85.1 million or the Board of Directors', '$85.1 million', false],
  ['"or" is fine when the gold has it', 'fixed or variable', 'fixed or variable', true],
  ['an amount with a separator is no year', '$2,019 million', '2,019 million', true],
  ['a JSON list of spans', '["Net debt", "Earnings before interest, tax, depreciation and amortisation"]', '["Earnings before interest, tax, depreciation and amortisation", "Net debt"]', true],
  ['a span holding a separator, in another order', 'Restructuring payments, Licence and spectrum payments', '["Licence and spectrum payments", "Restructuring payments"]', true],
  ['a bracketed list stays ordered, as reward.py has it', '[152260, 8]', '[8, 152260]', false],
  ['text by TAT-QA\'s normalisation', '"The Bureau of the Fiscal Service."', 'Bureau of the Fiscal Service', true],
];

describe('the extensions, each a case', () => {
  it.each(EXTENSIONS)('%s: "%s" for gold "%s"', (_, predicted, gold, match) => {
    expect(matchAnswer(predicted, gold)).toMatchObject({ match });
  });
  it('a relative tolerance is reward.py\'s rule when asked for', () => {
    expect(matchAnswer('2427.4', '2447', { relativeTolerance: 0.01 }).match).toBe(true);
    expect(matchAnswer('2016', '2017', { relativeTolerance: 0.01 }).match).toBe(true);
  });
});

describe('reading numbers', () => {
  it('reads separators, signs, currency, percent, scale and accounting negatives', () => {
    const read = (s: string) => readNumbers(s).map((n) => [n.value, n.decimals, n.scale?.word, n.percent]);
    expect(read('$2.5bn')).toEqual([[2.5, 1, 'billion', false]]);
    expect(read('\u22124 thousands')).toEqual([[-4, 0, 'thousand', false]]);
    expect(read('(3.20)')).toEqual([[-3.2, 2, undefined, false]]);
    expect(read('(2019)')).toEqual([[2019, 0, undefined, false]]);
    expect(read('$(9.8) million')).toEqual([[-9.8, 1, 'million', false]]);
    expect(read('(22.5)% of (3) bn')).toEqual([[-22.5, 1, undefined, true], [-3, 0, 'billion', false]]);
    expect(read('7.25 %')).toEqual([[7.25, 2, undefined, true]]);
    expect(read('25,28 and 99,999')).toEqual([[25, 0, undefined, false], [28, 0, undefined, false], [99999, 0, undefined, false]]);
    expect(read('2018-2019')).toEqual([[2018, 0, undefined, false], [2019, 0, undefined, false]]);
    expect(read('12 months')).toEqual([[12, 0, undefined, false]]);
  });
  it('writes number words as digits', () => {
    expect(wordsToDigits('one hundred and five, twenty-one and three million')).toBe('105, 21 and 3 million');
  });
});

describe('properties', () => {
  // The gold's precision decides, for any value, scale and sign.
  const scale = fc.constantFrom('', ' thousand', ' million', ' billion', '%');
  it('an answer at the gold\'s precision matches exactly when it is the same number', () => {
    fc.assert(fc.property(fc.integer({ min: -10_000_000, max: 10_000_000 }), fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 3 }), scale, (n, delta, d, s) => {
      const gold = (n / 10 ** d).toFixed(d);
      const answer = ((n + delta) / 10 ** d).toFixed(d);
      return matchAnswer(`${answer}${s}`, `${gold}${s}`).match === (delta === 0);
    }), { numRuns: 500 });
  });
  it('thousands separators, a plural scale word and the full amount never change the verdict', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 9_999_999 }), fc.integer({ min: -2, max: 2 }), fc.constantFrom(['thousand', 1e3], ['million', 1e6]), (n, delta, [word, factor]) => {
      const gold = `${n} ${word}`;
      const v = n + delta;
      const forms = [`${v.toLocaleString('en-US')} ${word}s`, `${(v * (factor as number)).toLocaleString('en-US')}`, `$${v.toLocaleString('en-US')} ${word}`];
      return forms.every((f) => matchAnswer(f, gold).match === (delta === 0));
    }), { numRuns: 300 });
  });
});
