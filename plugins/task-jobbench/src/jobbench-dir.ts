/**
 * JobBench on disk: the public layout `<occupation>/task<N>/task_folder/` with
 * `TASK_INSTRUCTIONS.txt`, `RUBRICS.json` and reference files. Each task's workspace gets the
 * reference files; the rubric stays on the host and goes only to the judge.
 *
 * A task may instead (or as well) have `CHECKS.json`: declarative deterministic checks (see
 * `checks/schema.ts`), graded without a judge. Files its `file_equals` checks compare against
 * lie in `task<N>/expected/`, beside `task_folder/`, so they never reach the agent. A
 * `task<N>/solution/` folder, when there is one, is the task's oracle (its files written out).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { ClawGymError, ErrorCodes, shellQuote, type OracleTurn, type Task, type TaskSuite } from '@clawgym/core';
import { writeBytesTurn } from './oracle';
import { judgeRubric, type JudgeEndpoint, type RubricItem } from './judge';
import { pickSplit, type SplitOptions } from '@clawgym/core';
import { workspaceDocuments, type TextLimits } from './workspace-text';
import { ChecksFileSchema, checksVerdict, referencePath, type Check } from './checks';

const INSTRUCTIONS = 'TASK_INSTRUCTIONS.txt';
const RUBRICS = 'RUBRICS.json';
const CHECKS = 'CHECKS.json';
const EXPECTED = 'expected';
const SOLUTION = 'solution';
const TEXT_KEYS = ['criterion', 'rubric', 'description', 'requirement', 'item', 'text', 'title'];

/** Options of {@link loadJobBench}. */
export interface JobBenchOptions {
  /** Reward at or above which a verdict passes (default 1: every rubric item met). */
  passThreshold?: number;
  /** What of the final workspace goes to the judge. */
  textLimits?: TextLimits;
  /** Refuse the whole folder when any task is broken, instead of loading the good ones (default false). */
  strict?: boolean;
  /** Where tasks left out are reported (default: a console warning). */
  warn?: (message: string) => void;
}

/** A task folder that did not become a task, and why. */
export interface JobBenchProblem { folder: string; message: string }

/** Rubric items from a RUBRICS.json: an array (or `{rubrics|items|criteria: [...]}`) of strings or objects. */
export function parseRubrics(json: unknown, where: string): RubricItem[] {
  const list = Array.isArray(json) ? json
    : json && typeof json === 'object' ? ['rubrics', 'items', 'criteria', 'rubric'].map((k) => (json as Record<string, unknown>)[k]).find(Array.isArray)
      : undefined;
  if (!list) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${where}: expected a list of rubric items (or {"rubrics": [...]})`);
  return list.map((item, i) => {
    if (typeof item === 'string') return { id: String(i + 1), text: item };
    if (item && typeof item === 'object') {
      const o = item as Record<string, unknown>;
      const key = TEXT_KEYS.find((k) => typeof o[k] === 'string');
      if (key) return { id: String(o.id ?? i + 1), text: o[key] as string };
    }
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${where}: rubric item ${i + 1} has no text (one of ${TEXT_KEYS.join(', ')})`);
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else if (e.isFile()) out.push(relative(dir, join(d, e.name)));
    }
  };
  await walk(dir);
  return out.sort();
}

const subdirs = async (dir: string) =>
  (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();

async function readJson(file: string): Promise<unknown> {
  try { return JSON.parse(await readFile(file, 'utf8')); } catch (e) {
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/** The checks of a CHECKS.json, each `file_equals` reference checked to exist. */
async function readChecks(file: string, referenceDir: string): Promise<Check[]> {
  const parsed = ChecksFileSchema.safeParse(await readJson(file));
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.length ? i.path.join('.') : '(top)'}: ${i.message}`);
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${file}: ${issues.join('; ')}`, {
      hint: 'a list of checks such as {"type": "file_exists", "path": "report.docx"}; types: file_exists, file_absent, contains, not_contains, xlsx_cell, file_equals, csv_query, sqlite_query',
    });
  }
  for (const c of parsed.data) if (c.type === 'file_equals') referencePath(c.reference, { referenceDir });
  return parsed.data;
}

/**
 * The oracle of a task with a `task<N>/solution/` folder: write each of its files into the
 * workspace, and delete what `file_absent` checks name. Undefined without the folder.
 */
async function solutionOracle(dir: string, checks: Check[] | undefined): Promise<OracleTurn[] | undefined> {
  if (!existsSync(dir)) return undefined;
  const turns: OracleTurn[] = [];
  for (const f of await filesUnder(dir)) {
    if (f.includes('/')) turns.push({ toolCalls: [{ name: 'bash', arguments: { command: `mkdir -p '${f.slice(0, f.lastIndexOf('/'))}'` } }] });
    turns.push(writeBytesTurn(f, await readFile(join(dir, f))));
  }
  const absent = (checks ?? []).filter((c) => c.type === 'file_absent').map((c) => shellQuote(c.path));
  if (absent.length) turns.push({ toolCalls: [{ name: 'bash', arguments: { command: `rm -rf -- ${absent.join(' ')}` } }] });
  return turns;
}

/** One task from its `task_folder`. */
async function loadOne(folder: string, id: string, occupation: string, judge: JudgeEndpoint | undefined, options: JobBenchOptions): Promise<Task> {
  const instruction = (await readFile(join(folder, INSTRUCTIONS), 'utf8')).trim();
  if (!instruction) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${join(folder, INSTRUCTIONS)} is empty`);
  const rubricFile = join(folder, RUBRICS);
  const checksFile = join(folder, CHECKS);
  const referenceDir = join(folder, '..', EXPECTED);
  if (!existsSync(rubricFile) && !existsSync(checksFile)) {
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${folder} has neither ${RUBRICS} (graded by a judge) nor ${CHECKS} (deterministic checks)`);
  }
  const rubric = existsSync(rubricFile) ? parseRubrics(await readJson(rubricFile), rubricFile) : undefined;
  const checks = existsSync(checksFile) ? await readChecks(checksFile, referenceDir) : undefined;
  const references = (await filesUnder(folder)).filter((f) => f !== INSTRUCTIONS && f !== RUBRICS && f !== CHECKS);
  const provided = async () => new Map(await Promise.all(references.map(async (f) => [f, await readFile(join(folder, f))] as const)));
  const listing = references.length ? `\n\nReference files (in the working folder): ${references.join(', ')}.` : '';
  return {
    id,
    category: occupation,
    instruction: `${instruction}${listing}\nSave every deliverable as a file in the working folder.`,
    oracle: await solutionOracle(join(folder, '..', SOLUTION), checks),
    async setup(ws) {
      for (const [f, data] of await provided()) await ws.writeFile(f, data);
    },
    async verify(ws) {
      const checked = checks && await checksVerdict(ws, checks, { referenceDir });
      if (checked && !rubric) return { reward: checked.reward, pass: checked.pass, details: checked.details };
      const items = (checks?.length ?? 0) + rubric!.length;
      // A failed check is decisive: the judge is not asked about work that misses a hard requirement.
      if (checked && !checked.pass) {
        return { reward: (checked.reward * checks!.length) / items, pass: false, details: `${checked.details}\n(a check failed: the rubric judge was not asked)` };
      }
      const documents = await workspaceDocuments(ws.root, await provided(), options.textLimits);
      const judged = await judgeRubric(judge, { instruction, rubric: rubric!, documents, passThreshold: options.passThreshold });
      if (!checked) return judged;
      const reward = (checks!.length + judged.reward * rubric!.length) / items;
      return { reward, pass: judged.pass, details: `${checked.details}\n${judged.details}` };
    },
  };
}

/**
 * Every task under a JobBench root (`<occupation>/task<N>/task_folder/`), sorted by id
 * (`jobbench/<occupation>/task<N>`), category = occupation, and each task folder left out with
 * the reason (a folder without TASK_INSTRUCTIONS.txt, bad JSON, an unknown check, a missing reference).
 */
export async function loadJobBenchReport(root: string, judge?: JudgeEndpoint, options: JobBenchOptions = {}): Promise<{ tasks: Task[]; problems: JobBenchProblem[] }> {
  const abs = resolve(root);
  if (!existsSync(abs) || !(await stat(abs)).isDirectory()) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `JobBench root ${abs} is not a folder`);
  const tasks: Task[] = [];
  const problems: JobBenchProblem[] = [];
  for (const occupation of await subdirs(abs)) {
    for (const t of await subdirs(join(abs, occupation))) {
      const folder = join(abs, occupation, t, 'task_folder');
      if (!existsSync(folder)) { problems.push({ folder: join(abs, occupation, t), message: 'has no task_folder/' }); continue; }
      if (!existsSync(join(folder, INSTRUCTIONS))) { problems.push({ folder, message: `has no ${INSTRUCTIONS}` }); continue; }
      try {
        tasks.push(await loadOne(folder, `jobbench/${occupation}/${t}`, occupation, judge, options));
      } catch (e) {
        problems.push({ folder, message: (e as Error).message });
      }
    }
  }
  return { tasks, problems };
}

/**
 * The tasks under a JobBench root. Task folders left out are passed to `options.warn` (never
 * dropped silently); it throws when no task loads, or on any broken task when `strict`.
 * Verifying rubric tasks needs `judge`.
 */
export async function loadJobBench(root: string, judge?: JudgeEndpoint, options: JobBenchOptions = {}): Promise<Task[]> {
  const { tasks, problems } = await loadJobBenchReport(root, judge, options);
  const listed = problems.map((p) => `${p.folder}: ${p.message}`).join('\n');
  if (tasks.length === 0) {
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `no JobBench tasks under ${resolve(root)}${problems.length ? `:\n${listed}` : ''}`, { hint: `expected <occupation>/task<N>/task_folder/${INSTRUCTIONS} with ${RUBRICS} or ${CHECKS}` });
  }
  if (problems.length && options.strict) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${problems.length} JobBench task(s) under ${resolve(root)} cannot be loaded:\n${listed}`);
  if (problems.length) (options.warn ?? ((m) => console.warn(`warning: ${m}`)))(`${resolve(root)}: loaded ${tasks.length} task(s), left out ${problems.length}:\n${listed}`);
  return tasks;
}

/** Options of {@link jobbenchDir}. */
export interface JobBenchDirOptions extends JobBenchOptions, SplitOptions {
  /** Suite name (default `jobbench:<folder name>`). */
  name?: string;
}

/**
 * A task suite over a JobBench folder, graded by `judge`. Train/test: by `testIds` or by
 * hashing the task id (`testFraction`, default 0.2); each call shuffles by seed.
 */
export function jobbenchDir(root: string, judge?: JudgeEndpoint, options: JobBenchDirOptions = {}): TaskSuite {
  let loaded: Promise<Task[]> | undefined;
  return {
    name: options.name ?? `jobbench:${basename(resolve(root))}`,
    async tasks(split, opts) {
      return pickSplit(await (loaded ??= loadJobBench(root, judge, options)), split, opts, options);
    },
  };
}
