import { definePlugin, z, type TaskSuite } from '@clawgym/core';
import { memoTask } from './docx-task';
import { jobbenchDir } from './jobbench-dir';
import { JudgeEndpointSchema } from './judge';
import { insertRowsTask, ordersPerCustomerTask } from './sqlite-tasks';
import { expensesTask, headcountTask } from './tasks';
import { regionTotalsTask } from './xlsx-task';
import { imageSizesTask } from './image-task';

export { expensesTask, headcountTask } from './tasks';
export { regionTotalsTask } from './xlsx-task';
export { imageSizesTask, solidPng } from './image-task';
export { memoTask } from './docx-task';
export { ordersPerCustomerTask, insertRowsTask } from './sqlite-tasks';
export { parseCsv } from './csv';
export { buildDocx, docxParagraphs, loadXlsx, plainCell, xlsxBytes, type CellValue } from './office';
export { sqliteBytes, withWorkspaceDb } from './sqlite';
export { loadJobBench, loadJobBenchReport, jobbenchDir, parseRubrics, type JobBenchOptions, type JobBenchDirOptions, type JobBenchProblem } from './jobbench-dir';
export { CheckSchema, ChecksFileSchema, checksVerdict, runChecks, readCell, fileText, type Check, type CheckContext, type CheckResult, type CellReading } from './checks';
export { judgeRubric, judgePrompt, parseJudgeReply, JudgeEndpointSchema, type JudgeEndpoint, type JudgeRequest, type RubricItem } from './judge';
export { workspaceDocuments, type WorkspaceDocument, type TextLimits } from './workspace-text';
export { splitOf, pickSplit, hashUnit, type SplitOptions } from '@clawgym/core';

/** Train and test draw from disjoint seed ranges, so no test task is ever trained on. */
const SPLIT_BASE = { train: 0, test: 1_000_000 } as const;
/**
 * The generated families, in turn: CSV expenses (spreadsheet), CSV headcount (hr-records),
 * xlsx region totals (spreadsheet), docx memo (document), SQLite orders and inserts (database).
 */
const FAMILIES = [expensesTask, headcountTask, regionTotalsTask, memoTask, ordersPerCustomerTask, insertRowsTask, imageSizesTask];

/** JobBench-style workplace tasks on office files (CSV, xlsx, docx, SQLite), generated per seed. */
export const jobbenchSuite: TaskSuite = {
  name: 'jobbench',
  async tasks(split, { seed, limit = 50 }) {
    return Array.from({ length: limit }, (_, i) => FAMILIES[i % FAMILIES.length]!(SPLIT_BASE[split] + seed * 10_007 + i));
  },
};

const DirSchema = z.strictObject({
  /** The JobBench root (`<occupation>/task<N>/task_folder/`). */
  root: z.string().min(1),
  name: z.string().min(1).optional(),
  testIds: z.array(z.string()).optional(),
  testFraction: z.number().min(0).max(1).optional(),
  passThreshold: z.number().min(0).max(1).optional(),
  strict: z.boolean().optional(),
});

/**
 * `@clawgym/task-jobbench`: provides the generated `jobbench` suite, and one suite per JobBench
 * folder in `dirs` (named `jobbench:<folder>` unless named), graded by its CHECKS.json and/or by the rubric `judge`.
 */
const jobbench = definePlugin({
  name: 'clawgym:task-jobbench',
  core: '^0.1.0',
  options: z.strictObject({
    dirs: z.array(DirSchema).default([]),
    judge: JudgeEndpointSchema.optional(),
  }),
  apply(api, options) {
    api.provide.taskSuite(jobbenchSuite);
    for (const d of options.dirs) api.provide.taskSuite(jobbenchDir(d.root, options.judge, { ...d, warn: (m) => api.log.warn(m) }));
  },
});
export default jobbench;
