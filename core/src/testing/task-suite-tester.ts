import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClawGymPlugin } from '../contracts/plugin';
import type { OracleTurn, Split, Task, TaskSuite, Verdict, VerifyContext } from '../contracts/task';
import { fsWorkspace } from '../1-tasks/workspace';
import { oracleOf } from '../eval/oracle';
import { isClawGymError } from '../errors';
import { workspaceVerdict } from '../6-rollout/verifier-bug';
import { createTestKernel } from './test-kernel';

/** What {@link checkTaskSuite} checks, one name each (a problem says which one failed). */
export type SuiteCheck = 'oracle' | 'untouched' | 'splits' | 'stable' | 'deterministic' | 'junk' | 'verdict';

/** One thing a task suite got wrong. */
export interface SuiteProblem {
  check: SuiteCheck;
  taskId?: string;
  message: string;
}

export interface TaskSuiteTesterOptions {
  /**
   * How to load the suite: called once per load, so a suite whose splits depend on something
   * other than the ids (a shuffle without the seed, a clock) shows up as unstable. Use
   * {@link suiteOfPlugin} for a plugin.
   */
  suite: () => TaskSuite | Promise<TaskSuite>;
  /** The config slot's options (`tasks: [{ use, options }]`). */
  options?: Record<string, unknown>;
  /** Tasks checked per split (default 20). */
  limit?: number;
  /** The run's seed the suite is asked with (default 0). */
  seed?: number;
  /** Tasks without an oracle are left out of the oracle check instead of being a problem. */
  allowMissingOracle?: boolean;
  /** What the verifier gets besides the workspace (a sandbox, for suites whose verifiers run in one). */
  context?: VerifyContext;
}

/** A loader for {@link TaskSuiteTesterOptions.suite}: the suite `name` that `plugin()` provides, in a fresh test kernel per load. */
export function suiteOfPlugin(plugin: () => ClawGymPlugin, name: string): () => Promise<TaskSuite> {
  return async () => (await createTestKernel({ plugins: [plugin()] })).registry.get('taskSuite', name);
}

/** Play an oracle's tool calls on a host folder, as the agentloop harness's tools would. */
export async function playOracle(turns: readonly OracleTurn[], root: string): Promise<void> {
  const ws = fsWorkspace(root);
  for (const call of turns.flatMap((t) => t.toolCalls)) {
    const a = call.arguments as Record<string, unknown>;
    if (call.name === 'write_file') await ws.writeFile(String(a.path), String(a.content ?? ''));
    else if (call.name === 'bash') spawnSync('/bin/sh', ['-c', String(a.command ?? '')], { cwd: root, timeout: 30_000 });
    // read_file and list_files change nothing.
  }
}

/**
 * A thrown value's message on one printable line (errors from another realm, as jest's, are no
 * `instanceof Error`; a parser's message may quote the junk bytes it choked on, newlines included).
 */
const messageOf = (err: unknown): string => {
  const m = (err as { message?: unknown } | undefined)?.message;
  const text = typeof m === 'string' ? m : String(err);
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, (c) => (c === '\ufffd' ? '?' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
};

const sameVerdict = (a: Verdict, b: Verdict) => a.reward === b.reward && a.pass === b.pass && a.details === b.details;

function verdictProblem(v: unknown): string | undefined {
  const r = v as Partial<Verdict> | undefined;
  if (!r || typeof r !== 'object') return `verify returned ${String(v)}, not a verdict`;
  if (typeof r.reward !== 'number' || !(r.reward >= 0 && r.reward <= 1)) return `its reward ${String(r.reward)} is not a number in [0, 1]`;
  if (typeof r.pass !== 'boolean') return `its pass ${String(r.pass)} is not a boolean`;
  if (typeof r.details !== 'string') return 'its details are not a string';
  return undefined;
}

/** Each workspace a check made, removed at the end. */
class Workspaces {
  private readonly made: string[] = [];
  async fresh(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'clawgym-suite-'));
    this.made.push(dir);
    return dir;
  }
  async removeAll(): Promise<void> {
    for (const d of this.made.splice(0)) await rm(d, { recursive: true, force: true });
  }
}

async function filesUnder(root: string, dir = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...await filesUnder(root, rel));
    else out.push(rel);
  }
  return out;
}

/**
 * Junk a verifier must survive: nothing at all; the task's files turned to random bytes; a
 * folder where the oracle would write a file. Each returns the workspace's root.
 */
const JUNK: Record<string, (task: Task, root: string, turns: readonly OracleTurn[]) => Promise<void>> = {
  empty: async () => {},
  'random bytes': async (task, root) => {
    await task.setup(fsWorkspace(root));
    for (const f of await filesUnder(root)) await writeFile(join(root, f), randomBytes(64));
    await writeFile(join(root, 'junk.bin'), randomBytes(256));
  },
  'folders for files': async (task, root, turns) => {
    await task.setup(fsWorkspace(root));
    for (const c of turns.flatMap((t) => t.toolCalls)) {
      if (c.name !== 'write_file') continue;
      const path = join(root, String(c.arguments.path));
      if (await stat(path).then(() => true, () => false)) await rm(path, { recursive: true, force: true });
      await mkdir(join(path, 'not-a-file'), { recursive: true });
    }
  },
};

/** Verify one task in a workspace laid out by `lay`; a throw is returned as the error. */
async function verifyIn(o: TaskSuiteTesterOptions, w: Workspaces, task: Task, lay: (root: string) => Promise<void>): Promise<{ verdict?: Verdict; error?: unknown }> {
  const root = await w.fresh();
  await lay(root);
  try {
    return { verdict: await task.verify(fsWorkspace(root), o.context) };
  } catch (error) {
    // As the runner scores it: a workspace the agent left unreadable is a wrong answer.
    const wrong = workspaceVerdict(error);
    return wrong ? { verdict: wrong } : { error };
  }
}

/** The checks of one task: oracle passes, untouched fails, verify deterministic, junk survived. */
async function checkTask(o: TaskSuiteTesterOptions, suiteName: string, task: Task, w: Workspaces): Promise<SuiteProblem[]> {
  const problems: SuiteProblem[] = [];
  const say = (check: SuiteCheck, message: string) => problems.push({ check, taskId: task.id, message });
  const turns = (await oracleOf(task)) ?? [];
  const setup = (root: string) => task.setup(fsWorkspace(root));
  const solved = async (root: string) => { await setup(root); await playOracle(turns, root); };
  const runs = { untouched: setup, oracle: solved };
  for (const [what, lay] of Object.entries(runs)) {
    if (what === 'oracle' && (await oracleOf(task)) === undefined) {
      if (!o.allowMissingOracle) say('oracle', 'has no oracle (set allowMissingOracle to leave such tasks out)');
      continue;
    }
    const [first, second] = [await verifyIn(o, w, task, lay), await verifyIn(o, w, task, lay)];
    if (first.error) { say(what === 'oracle' ? 'oracle' : 'untouched', `verify threw on the ${what} workspace: ${messageOf(first.error)}`); continue; }
    const bad = verdictProblem(first.verdict);
    if (bad) { say('verdict', `on the ${what} workspace ${bad}`); continue; }
    const v = first.verdict!;
    if (what === 'oracle' && !(v.pass && v.reward === 1)) say('oracle', `the oracle does not pass: reward ${v.reward}, pass ${v.pass}: ${v.details}`);
    if (what === 'untouched' && (v.pass || v.reward >= 1)) say('untouched', `an untouched workspace passes: reward ${v.reward}: ${v.details}`);
    if (second.error || !sameVerdict(v, second.verdict!)) say('deterministic', `two verifications of the same ${what} workspace differ: ${JSON.stringify(v)} then ${second.error ? `a throw (${messageOf(second.error)})` : JSON.stringify(second.verdict)}`);
  }
  for (const [name, lay] of Object.entries(JUNK)) {
    const r = await verifyIn(o, w, task, (root) => lay(task, root, turns));
    if (r.error) {
      // A ClawGymError naming the suite is a verifier fault it reports on purpose; anything else would be its plugin's bug.
      if (!(isClawGymError(r.error) && r.error.message.includes(suiteName))) say('junk', `verify threw on a junk workspace (${name}): ${messageOf(r.error)}; a verifier returns reward 0 there, or raises a ClawGymError that names the suite "${suiteName}"`);
    } else if (verdictProblem(r.verdict)) say('verdict', `on a junk workspace (${name}) ${verdictProblem(r.verdict)}`);
    else if (r.verdict!.reward !== 0 || r.verdict!.pass) say('junk', `a junk workspace (${name}) scores reward ${r.verdict!.reward}${r.verdict!.pass ? ' and passes' : ''}: ${r.verdict!.details}`);
  }
  return problems;
}

/** Splits: disjoint, no id twice, the same tasks in the same order on another load. */
async function checkSplits(o: TaskSuiteTesterOptions): Promise<{ problems: SuiteProblem[]; tasks: Task[]; name: string }> {
  const problems: SuiteProblem[] = [];
  const ask = { seed: o.seed ?? 0, limit: o.limit ?? 20, ...(o.options ? { options: o.options } : {}) };
  const load = async () => {
    const suite = await o.suite();
    const of = async (split: Split) => suite.tasks(split, ask);
    return { name: suite.name, train: await of('train'), test: await of('test') };
  };
  const [a, b] = [await load(), await load()];
  if (a.train.length + a.test.length === 0) problems.push({ check: 'splits', message: 'the suite has no tasks in either split' });
  if (a.test.length === 0) problems.push({ check: 'splits', message: 'the test split is empty: nothing to evaluate on' });
  const testIds = new Set(a.test.map((t) => t.id));
  for (const t of a.train) if (testIds.has(t.id)) problems.push({ check: 'splits', taskId: t.id, message: 'is in both train and test' });
  for (const tasks of [a.train, a.test]) {
    const seen = new Set<string>();
    for (const t of tasks) { if (seen.has(t.id)) problems.push({ check: 'splits', taskId: t.id, message: 'appears twice in one split' }); seen.add(t.id); }
  }
  for (const split of ['train', 'test'] as const) {
    const [x, y] = [a[split].map((t) => `${t.id}\0${t.instruction}`), b[split].map((t) => `${t.id}\0${t.instruction}`)];
    if (JSON.stringify(x) !== JSON.stringify(y)) problems.push({ check: 'stable', message: `the ${split} split differs between two loads with the same seed (first ids: ${a[split].slice(0, 3).map((t) => t.id).join(', ')} then ${b[split].slice(0, 3).map((t) => t.id).join(', ')})` });
  }
  return { problems, tasks: [...a.train, ...a.test], name: a.name };
}

/**
 * Check a task suite the way ClawGym relies on it, in the spirit of ESLint's RuleTester: every
 * task's oracle passes, an untouched workspace fails, train and test are disjoint and the same
 * on every load, `verify` gives the same verdict twice, and on a junk workspace it returns
 * reward 0 (or raises a ClawGymError naming the suite) and never throws a plain error. Returns
 * every problem found (none for a good suite); {@link describeTaskSuite} turns it into tests.
 */
export async function checkTaskSuite(o: TaskSuiteTesterOptions): Promise<SuiteProblem[]> {
  const w = new Workspaces();
  try {
    const { problems, tasks, name } = await checkSplits(o);
    for (const task of tasks) problems.push(...await checkTask(o, name, task, w));
    return problems;
  } finally {
    await w.removeAll();
  }
}

/** Problems as lines for a failing test's message. */
export const formatProblems = (problems: readonly SuiteProblem[]): string =>
  problems.map((p) => `${p.check}: ${p.taskId ? `task ${p.taskId} ` : ''}${p.message}`).join('\n');

/**
 * jest tests for a task suite: one test per check, each failing with the tasks and what went
 * wrong. `describeTaskSuite('builtin', { suite: suiteOfPlugin(builtin, 'builtin') })`.
 */
export function describeTaskSuite(title: string, o: TaskSuiteTesterOptions, timeoutMs = 120_000): void {
  describe(`task suite ${title} (task-suite tester)`, () => {
    let problems: SuiteProblem[] = [];
    beforeAll(async () => { problems = await checkTaskSuite(o); }, timeoutMs);
    const checks: [SuiteCheck[], string][] = [
      [['oracle'], 'every task passes with its oracle'],
      [['untouched'], 'an untouched workspace fails'],
      [['splits'], 'train and test are disjoint, without repeated ids'],
      [['stable'], 'the splits are the same on every load'],
      [['deterministic'], 'verify gives the same verdict twice'],
      [['junk', 'verdict'], 'verify returns a verdict (reward 0 on junk) and never throws a plain error'],
    ];
    for (const [which, name] of checks) {
      it(name, () => {
        expect(formatProblems(problems.filter((p) => which.includes(p.check)))).toBe('');
      });
    }
  });
}
