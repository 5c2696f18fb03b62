/** The agreement table: how often a verifier accepts right answer forms and rejects wrong ones. */
import { extractFinalAnswer, matchAnswer } from '../answer';
import { answerForms, type AnswerForm } from './forms';
import { keyNumber, keySpans, officeqaGold, type TatQaQuestion } from './tatqa';

/** One graded answer. */
export interface AgreementCase extends AnswerForm { uid: string; gold: string; accepted: boolean; reason: string }

/** Counts per form kind and in total. */
export interface AgreementRow { kind: string; right: boolean; cases: number; agreed: number }

/** The whole table. */
export interface Agreement {
  cases: AgreementCase[];
  rows: AgreementRow[];
  /** Share of right forms accepted. */
  goldAccept: number;
  /** Share of wrong forms rejected. */
  wrongReject: number;
}

/** The answer as the verifier reads it: the last tag's content, or the whole text when untagged. */
const answerOf = (text: string) => extractFinalAnswer(text) ?? text;

/** Grade every answer form of every question with OfficeQA's matcher, against the question's gold. */
export function agreementTable(questions: TatQaQuestion[], grade: (answer: string, gold: string) => { match: boolean; reason: string } = matchAnswer): Agreement {
  const texts = questions.filter((q) => keySpans(q).length === 1 && !keyNumber(keySpans(q)[0]!)).map((q) => keySpans(q)[0]!);
  const cases: AgreementCase[] = [];
  questions.forEach((q, i) => {
    const others = [...texts.slice(i % texts.length), ...texts.slice(0, i % texts.length)];
    const gold = officeqaGold(q);
    for (const form of answerForms(q, others)) {
      const { match, reason } = grade(answerOf(form.text), gold);
      cases.push({ ...form, uid: q.uid, gold, accepted: match, reason });
    }
  });
  const byKind = new Map<string, AgreementRow>();
  for (const c of cases) {
    const key = `${c.right}:${c.kind}`;
    const row = byKind.get(key) ?? { kind: c.kind, right: c.right, cases: 0, agreed: 0 };
    row.cases++;
    if (c.accepted === c.right) row.agreed++;
    byKind.set(key, row);
  }
  const right = cases.filter((c) => c.right);
  const wrong = cases.filter((c) => !c.right);
  return {
    cases,
    rows: [...byKind.values()].sort((a, b) => Number(b.right) - Number(a.right) || a.kind.localeCompare(b.kind)),
    goldAccept: right.filter((c) => c.accepted).length / right.length,
    wrongReject: wrong.filter((c) => !c.accepted).length / wrong.length,
  };
}
