import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answerForms, agreementTable, officeqaGold, type TatQaQuestion } from './index';
import { matchAnswer } from '../answer';

/** 200 TAT-QA dev questions (NExTplusplus/TAT-QA 870accc, CC BY 4.0): see __fixtures__/tatqa/NOTICE.md. */
const { questions } = JSON.parse(readFileSync(join(__dirname, '..', '__fixtures__', 'tatqa', 'tatqa-dev-subset.json'), 'utf8')) as { questions: TatQaQuestion[] };

const q = (answer: TatQaQuestion['answer'], scale: TatQaQuestion['scale'], answer_type: TatQaQuestion['answer_type'] = 'arithmetic', question = 'What was the change in 2019?'): TatQaQuestion =>
  ({ uid: 'x', question, answer, answer_type, scale });

describe('TAT-QA keys as OfficeQA golds', () => {
  it('writes the scale the table states, and lists as lists', () => {
    expect(officeqaGold(q(-12.6, 'million'))).toBe('-12.6 million');
    expect(officeqaGold(q(2.61, 'percent'))).toBe('2.61%');
    expect(officeqaGold(q(['$(9.8) million'], '', 'span'))).toBe('$(9.8) million');
    expect(officeqaGold(q(['73,260', '57,768'], 'thousand', 'multi-span'))).toBe('73,260 thousand, 57,768 thousand');
    expect(officeqaGold(q(['Licence and spectrum payments', 'Restructuring payments'], '', 'multi-span'))).toBe('["Licence and spectrum payments","Restructuring payments"]');
  });
});

describe('answer forms are made from the key, not from the matcher', () => {
  it('the wrong forms of a number differ from it at the key\'s precision', () => {
    const forms = answerForms(q(2.61, 'percent'), []);
    expect(forms.filter((f) => !f.right).map((f) => [f.kind, f.text])).toEqual([
      ['near miss +0.8%', '2.63%'], ['near miss -0.8%', '2.59%'], ['one unit off in the last digit', '2.62%'], ['one unit off the other way', '2.60%'],
      ['rounding-level miss', '2.6%'], ['the question\'s year instead of the value', '2019'], ['sign flipped', '-2.61%'], ['percent times 100', '261.00'],
      ['decimal point shifted', '26.10%'], ['two digits transposed', '2.16%'],
      ['a sentence with the year and a near miss', 'In 2019 the value was 2.63%.'], ['hedged between two answers', '2.61% or 2.62%'],
    ]);
  });
  it('a list has partial, padded and near-miss forms', () => {
    const kinds = answerForms(q(['25', '28'], '', 'multi-span'), []).filter((f) => !f.right).map((f) => `${f.kind}: ${f.text}`);
    expect(kinds).toEqual(['list without its last item: 25', 'list without its first item: 28', 'list with one near miss: 25, 29', 'list with an extra item: 25, 28, 29']);
  });
  it('digits are transposed where two differ', () => {
    expect(answerForms(q(12682, 'thousand'), []).find((f) => f.kind === 'two digits transposed')!.text).toBe('21682 thousand');
  });
});

describe('agreement with TAT-QA\'s answer keys', () => {
  const table = agreementTable(questions);

  it('accepts at least 98% of the right forms and rejects at least 99% of the wrong ones', () => {
    expect(table.cases.length).toBeGreaterThan(2000);
    expect(table.goldAccept).toBeGreaterThanOrEqual(0.98);
    expect(table.wrongReject).toBeGreaterThanOrEqual(0.99);
  });

  it('each kind of wrong answer the issue names is in the set and rejected', () => {
    const row = (kind: string) => table.rows.find((r) => !r.right && r.kind === kind)!;
    for (const kind of ['near miss +0.8%', 'near miss -0.8%', 'neighbouring year', 'rounding-level miss', 'list without its last item', 'list with an extra item']) {
      expect(row(kind).cases).toBeGreaterThan(0);
      expect(row(kind).agreed).toBe(row(kind).cases);
    }
  });

  it('the refused right forms are the ambiguous year sentences, said why', () => {
    const refused = table.cases.filter((c) => c.right && !c.accepted);
    expect(new Set(refused.map((c) => c.kind))).toEqual(new Set(['a sentence with a year before the value']));
    expect(refused.every((c) => /^expected 1 number, found 2/.test(c.reason))).toBe(true);
  });

  it('a 1% relative tolerance (reward.py\'s README example) accepts near misses the default rejects', () => {
    const loose = agreementTable(questions, (a, g) => matchAnswer(a, g, { relativeTolerance: 0.01 }));
    expect(loose.wrongReject).toBeLessThan(0.95);
    const near = loose.rows.find((r) => r.kind === 'near miss +0.8%')!;
    // Rounded to the key's precision some "0.8%" misses land beyond 1% (0.87 → 0.88): most do not.
    expect(near.agreed / near.cases).toBeLessThan(0.1);
  });
});
