/**
 * The public OfficeQA release on disk: a CSV (`uid, question, answer, source_docs,
 * source_files, difficulty`) and a corpus folder of the source documents. Each row becomes a
 * task whose workspace holds only its listed source files, under `corpus/`.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { ClawGymError, ErrorCodes, Rng, splitOf, type Split, type Task, type TaskSuite } from '@clawgym/core';
import { readCsv } from './csv';
import { verifyFinalAnswer } from './tasks';

const REQUIRED = ['uid', 'question', 'answer', 'source_files'] as const;
const COLUMNS = ['uid', 'question', 'answer', 'source_docs', 'source_files', 'difficulty'];

/** Where an OfficeQA release lies, and how to split it. */
export interface OfficeQaSource {
  /** The questions CSV. */
  csv: string;
  /** Folder holding the source files (searched recursively; matched by path, then by file name). */
  corpus: string;
  /** uids of the test questions; the rest are train. Takes precedence over `testFraction`. */
  testUids?: string[];
  /** Share of questions in test, chosen by hashing the uid (default 0.2). */
  testFraction?: number;
  /** reward.py's relative tolerance on numbers (default 0: equal at the gold's precision). */
  relativeTolerance?: number;
  /** Refuse the whole file when any row is broken, instead of loading the good rows (default false). */
  strict?: boolean;
}

/** A row that did not become a task, and why. */
export interface LoadProblem {
  /** `file:line (row N, column C)`: the row counted from the header (row 0), and the column name when one field is at fault. */
  where: string;
  /** The row's uid, when it could be read. */
  uid?: string;
  message: string;
}

/** The tasks of a release, and the rows left out. */
export interface OfficeQaLoad { tasks: Task[]; problems: LoadProblem[] }

const EMPTY = {
  uid: 'the uid is empty: expected an identifier unique in the file',
  question: 'the question is empty: expected the text to ask',
  answer: 'the answer is empty: expected the gold answer (a task without one cannot be passed)',
} as const;

/** The file names in a `source_files` cell: a JSON list, or names separated by newlines, commas, semicolons or `|`. */
export function parseSourceFiles(cell: string): string[] {
  const t = cell.trim();
  if (t.startsWith('[')) {
    try {
      const list = JSON.parse(t) as unknown;
      if (Array.isArray(list)) return list.map(String).map((s) => s.trim()).filter(Boolean);
    } catch { /* fall through to separators */ }
  }
  return t.split(/[\n,;|]+/).map((s) => s.trim().replace(/^['"]|['"]$/g, '')).filter(Boolean);
}

async function indexCorpus(dir: string): Promise<{ byPath: Map<string, string>; byName: Map<string, string[]> }> {
  const byPath = new Map<string, string>();
  const byName = new Map<string, string[]>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) {
        byPath.set(relative(dir, full), full);
        byName.set(e.name, [...(byName.get(e.name) ?? []), full]);
      }
    }
  };
  await walk(dir);
  return { byPath, byName };
}

/** What the model is asked: the question, where the documents are, and how to state the answer. */
function instructionOf(question: string, listing: string): string {
  return `The folder corpus/ holds source documents: ${listing}. Answer this question from them:\n\n${question}\n\n` +
    'State the answer alone, with its unit or scale as the documents give it (for example "2,447 thousand", "$5.4 billion", "12.5%"), ' +
    'and for several values list them separated by commas. ' +
    'Write your final answer to answer.txt inside <FINAL_ANSWER></FINAL_ANSWER> tags.';
}

/**
 * Every readable row of an OfficeQA CSV as a task (`officeqa/<uid>`, category = difficulty),
 * and each row left out with its file, line, column and what was expected: a malformed CSV
 * record, a row with the wrong number of fields, an empty uid, question or answer, a duplicate
 * uid, source files not in the corpus. A file without the required columns is refused whole.
 */
export async function loadOfficeQaReport(source: OfficeQaSource): Promise<OfficeQaLoad> {
  const csvPath = resolve(source.csv);
  const corpus = resolve(source.corpus);
  if (!existsSync(csvPath)) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `OfficeQA CSV ${csvPath} does not exist`);
  if (!existsSync(corpus)) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `OfficeQA corpus folder ${corpus} does not exist`);
  const { records, problems: csvProblems } = readCsv(await readFile(csvPath, 'utf8'));
  const [header, ...body] = records;
  const keys = header?.cells.map((h) => h.trim()) ?? [];
  const missingCols = REQUIRED.filter((c) => !keys.includes(c));
  if (!header || missingCols.length) {
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${csvPath}: ${!header ? 'the file is empty' : `missing column(s) ${missingCols.join(', ')} (the header has ${keys.join(', ')})`}`, {
      hint: `expected the columns ${COLUMNS.join(', ')} (uid, question, answer and source_files are required)`,
    });
  }
  const problems: LoadProblem[] = csvProblems.map((p) => ({
    where: `${csvPath}:${p.line} (row ${p.row}${p.field ? `, column ${keys[p.field - 1] ?? `#${p.field}`}` : ''})`,
    message: p.message,
  }));
  const index = await indexCorpus(corpus);
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  for (const rec of body) {
    const where = `${csvPath}:${rec.line}`;
    const at = (column?: string) => `${where} (row ${rec.row}${column ? `, column ${column}` : ''})`;
    const row = Object.fromEntries(keys.map((k, i) => [k, rec.cells[i] ?? '']));
    const uid = row.uid!.trim() || undefined;
    const refuse = (message: string, column?: string) => problems.push({ where: at(column), uid, message });
    if (rec.cells.length !== keys.length) {
      refuse(`the row has ${rec.cells.length} field${rec.cells.length === 1 ? '' : 's'}, the header has ${keys.length} (${keys.join(', ')}): a missing or extra comma, or a field with a comma that is not quoted`);
      continue;
    }
    const empty = (['uid', 'question', 'answer'] as const).find((c) => !row[c]!.trim());
    if (empty) { refuse(EMPTY[empty], empty); continue; }
    if (seen.has(uid!)) { refuse(`uid ${uid} appears twice (first on line ${seen.get(uid!)})`, 'uid'); continue; }
    seen.set(uid!, rec.line);
    const listed = parseSourceFiles(row.source_files!);
    const files = listed.map((f) => ({ name: basename(f), listed: f, host: index.byPath.get(f) ?? index.byName.get(basename(f))?.[0] }));
    const absent = files.filter((f) => !f.host).map((f) => f.listed);
    if (absent.length) { refuse(`source file(s) ${absent.join(', ')} are not in the corpus folder ${corpus}`, 'source_files'); continue; }
    const gold = row.answer!.trim();
    const listing = files.length ? files.map((f) => f.name).join(', ') : '(none listed)';
    tasks.push({
      id: `officeqa/${uid}`,
      category: row.difficulty?.trim().toLowerCase() || 'officeqa',
      instruction: instructionOf(row.question!.trim(), listing),
      // The oracle writes the answer column: with it every task must pass, the pipeline measured end to end.
      oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'answer.txt', content: `<FINAL_ANSWER>${gold}</FINAL_ANSWER>\n` } }] }],
      async setup(ws) {
        for (const f of files) await ws.writeFile(`corpus/${f.name}`, await readFile(f.host!));
      },
      verify: (ws) => verifyFinalAnswer(ws, gold, { relativeTolerance: source.relativeTolerance }),
    });
  }
  return { tasks, problems };
}

const describeProblem = (p: LoadProblem) => `${p.where}${p.uid ? ` [uid ${p.uid}]` : ''}: ${p.message}`;

/**
 * The tasks of an OfficeQA CSV. Rows left out are passed to `warn` one by one (never dropped
 * silently); it throws when no row is usable, or on any broken row when `strict`.
 */
export async function loadOfficeQa(source: OfficeQaSource, warn: (message: string) => void = (m) => console.warn(`warning: ${m}`)): Promise<Task[]> {
  const { tasks, problems } = await loadOfficeQaReport(source);
  if (problems.length && (source.strict || tasks.length === 0)) {
    throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${problems.length} row(s) of ${resolve(source.csv)} cannot be loaded${tasks.length ? '' : ' and none can'}:\n${problems.map(describeProblem).join('\n')}`, {
      hint: source.strict ? 'fix the rows, or load the good ones with strict: false' : 'fix the rows listed',
    });
  }
  if (tasks.length === 0) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${resolve(source.csv)} has a header and no rows`);
  if (problems.length) warn(`${basename(source.csv)}: loaded ${tasks.length} question(s), left out ${problems.length}:\n${problems.map(describeProblem).join('\n')}`);
  return tasks;
}

/** The split of a question: listed in `testUids`, or by hashing its uid. */
export function officeqaSplitOf(uid: string, source: Pick<OfficeQaSource, 'testUids' | 'testFraction'>): Split {
  return splitOf(uid, { testIds: source.testUids, testFraction: source.testFraction });
}

/**
 * A task suite over an OfficeQA release (name `officeqa:<csv file name>` unless given). Each
 * call returns the split's questions shuffled by seed, at most `limit`.
 */
export function officeqaDir(source: OfficeQaSource & { name?: string }, warn?: (message: string) => void): TaskSuite {
  let loaded: Promise<Task[]> | undefined;
  return {
    name: source.name ?? `officeqa:${basename(source.csv).replace(/\.csv$/i, '')}`,
    async tasks(split, { seed, limit }) {
      const all = await (loaded ??= loadOfficeQa(source, warn));
      const chosen = all.filter((t) => officeqaSplitOf(t.id.slice('officeqa/'.length), source) === split);
      const rng = new Rng(seed);
      for (let i = chosen.length - 1; i > 0; i--) {
        const j = Math.floor(rng.next() * (i + 1));
        [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
      }
      return limit === undefined ? chosen : chosen.slice(0, limit);
    },
  };
}
