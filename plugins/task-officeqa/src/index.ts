import { definePlugin, z, type TaskSuite } from '@clawgym/core';
import { officeqaDir } from './loader';
import { reportQuestionTask } from './tasks';

export {
  answersMatch, extractFinalAnswer, matchAnswer, numbersAgree, splitSpans, readNumbers, wordsToDigits, isYearLike, normalizeText, officeqaText,
  SCALE_WORDS, type MatchOptions, type MatchResult, type NumberMention,
} from './answer';
export { reportQuestionTask, verifyFinalAnswer } from './tasks';
export { parseCsvRecords, readCsv, type CsvFile, type CsvProblem, type CsvRecord } from './csv';
export { loadOfficeQa, loadOfficeQaReport, officeqaDir, officeqaSplitOf, parseSourceFiles, type LoadProblem, type OfficeQaLoad, type OfficeQaSource } from './loader';

const SPLIT_BASE = { train: 0, test: 1_000_000 } as const;

/** OfficeQA-style document question answering over generated report corpora. */
export const officeqaSuite: TaskSuite = {
  name: 'officeqa',
  async tasks(split, { seed, limit = 50 }) {
    return Array.from({ length: limit }, (_, i) => reportQuestionTask(SPLIT_BASE[split] + seed * 10_007 + i));
  },
};

const DatasetSchema = z.strictObject({
  csv: z.string().min(1),
  corpus: z.string().min(1),
  name: z.string().min(1).optional(),
  testUids: z.array(z.string()).optional(),
  testFraction: z.number().min(0).max(1).optional(),
  relativeTolerance: z.number().min(0).max(1).optional(),
  strict: z.boolean().optional(),
});

/**
 * `@clawgym/task-officeqa`: provides the generated `officeqa` suite, and one suite per
 * OfficeQA release in `datasets` (`{ csv, corpus }`, named `officeqa:<csv name>` unless named).
 */
const officeqa = definePlugin({
  name: 'clawgym:task-officeqa',
  core: '^0.1.0',
  options: z.strictObject({ datasets: z.array(DatasetSchema).default([]) }),
  apply(api, options) {
    api.provide.taskSuite(officeqaSuite);
    for (const d of options.datasets) api.provide.taskSuite(officeqaDir(d, (m) => api.log.warn(m)));
  },
});
export default officeqa;
export { agreementTable, answerForms, officeqaGold, type Agreement, type AgreementCase, type AgreementRow, type AnswerForm, type TatQaQuestion } from './agreement';
