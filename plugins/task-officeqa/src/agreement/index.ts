export { agreementTable, type Agreement, type AgreementCase, type AgreementRow } from './table';
export { answerForms, type AnswerForm } from './forms';
export { officeqaGold, keyNumber, keySpans, spanGold, type KeyNumber, type TatQaQuestion } from './tatqa';
