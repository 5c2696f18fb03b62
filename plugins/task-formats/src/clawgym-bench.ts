/**
 * ClawGym-Task and ClawGym-Bench tasks (ClawGym-RL's layout, `RL/data/DATASET_README.md` of
 * ClawGym/ClawGym-Agents): `data_entry.json` (`task_id`, `user_query`, `metadata`, and
 * `input_mount_dir` when the task has input files), `input_files/` (copied to
 * `input_mount_dir` when a rollout starts: read from the task folder then, never copied up
 * front) and `reward/reward.sh` (graded as ClawGym-RL grades it: clawgym-reward.ts).
 *
 * The workspace is at `/root/.openclaw/workspace` inside the sandbox for every task, as
 * ClawGym-RL mounts it (a task without `input_mount_dir` gets an empty one there): its files
 * and reward scripts name that path. An optional `solution/solve.sh` is exposed as the oracle.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf, pickSplit, type SplitOptions, type Task, type TaskSuite } from '@clawgym/core';
import { gradeClawGym, OPENCLAW_WORKSPACE } from './clawgym-reward';
import { copyToWorkspace, filesUnder, isDir, subdirs } from './files';
import type { TaskProblem } from './harbor';
import { bashOracle } from './oracle';
import { requireSandbox } from './verifier-script';

const ENTRY = 'data_entry.json';

/** A loaded ClawGym-Task / ClawGym-Bench task: a {@link Task} and its entry. */
export interface ClawGymBenchTask extends Task {
  readonly format: 'clawgym-bench';
  readonly dir: string;
  /** The parsed data_entry.json. */
  readonly entry: Record<string, unknown>;
  /** The text of solution/solve.sh, when the task ships one (also the task's `oracle`). */
  readonly solveScript?: string;
}

/** Options of the ClawGym-Bench loader and suite. */
export interface ClawGymBenchOptions extends SplitOptions {
  /** Reward at or above which a verdict passes (default: above 0.5, as ClawGym-RL counts a task correct). */
  passThreshold?: number;
  /** reward.sh's time limit (default 120 s, ClawGym-RL's). */
  rewardTimeoutMs?: number;
  /** Suite name (default `clawgym-bench:<folder name>`). */
  name?: string;
  /** Fail on the first broken task instead of loading the others and reporting it. */
  strict?: boolean;
  /** Where reports of broken tasks go (default console.warn). */
  log?: (msg: string) => void;
}

/** The folder inside the workspace that `input_mount_dir` names ('' for the workspace itself). */
function mountedAt(entry: Record<string, unknown>, bad: (why: string) => Error): string | undefined {
  if (!('input_mount_dir' in entry)) return undefined;
  const dir = entry.input_mount_dir;
  if (typeof dir !== 'string' || !dir) throw bad(`${ENTRY}: "input_mount_dir" must be a path`);
  const norm = posix.normalize(dir).replace(/(.)\/$/, '$1');
  if (norm !== OPENCLAW_WORKSPACE && !norm.startsWith(`${OPENCLAW_WORKSPACE}/`)) throw bad(`${ENTRY}: "input_mount_dir" ${dir} is outside ${OPENCLAW_WORKSPACE}, where the workspace is`);
  return posix.relative(OPENCLAW_WORKSPACE, norm);
}

/** One task from its folder (checks what ClawGym-RL's `_load_task_spec` checks). */
export async function loadClawGymBenchTask(dir: string, options: ClawGymBenchOptions = {}): Promise<ClawGymBenchTask> {
  const abs = resolve(dir);
  const bad = (why: string) => new ClawGymError(ErrorCodes.TASK_INVALID, `${abs}: ${why}`);
  let entry: Record<string, unknown>;
  try { entry = JSON.parse(await readFile(join(abs, ENTRY), 'utf8')) as Record<string, unknown>; } catch (e) {
    throw bad(existsSync(join(abs, ENTRY)) ? `${ENTRY} is not valid JSON (${(e as Error).message})` : `no ${ENTRY}`);
  }
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw bad(`${ENTRY} is not a JSON object`);
  if (typeof entry.task_id !== 'string' || !entry.task_id) throw bad(`${ENTRY} has no "task_id"`);
  if (typeof entry.user_query !== 'string' || !entry.user_query.trim()) throw bad(`${ENTRY} has no "user_query"`);
  const meta = entry.metadata;
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) throw bad(`${ENTRY} has no "metadata" object`);
  const metadata = meta as Record<string, unknown>;
  const sub = mountedAt(entry, bad);
  const inputs = join(abs, 'input_files');
  if (sub !== undefined && !(await isDir(inputs))) throw bad('"input_mount_dir" is set but input_files/ is missing');
  if (!existsSync(join(abs, 'reward', 'reward.sh'))) throw bad('no reward/reward.sh');
  const id = entry.task_id;
  const solve = join(abs, 'solution', 'solve.sh');
  const solveScript = existsSync(solve) ? await readFile(solve, 'utf8') : undefined;

  return {
    format: 'clawgym-bench',
    dir: abs,
    entry,
    id,
    category: typeof metadata.category === 'string' && metadata.category.trim() ? metadata.category.trim() : 'clawgym-bench',
    instruction: entry.user_query,
    workspacePath: OPENCLAW_WORKSPACE,
    async setup(ws) {
      if (sub === undefined) return; // no input files: an empty workspace
      await copyToWorkspace(inputs, await filesUnder(inputs), ws, sub);
    },
    async verify(_ws, context) {
      return gradeClawGym(requireSandbox(context, id), {
        taskId: id, rewardDir: join(abs, 'reward'), metadata,
        finalMessage: context?.finalMessage, conversation: context?.conversation,
        timeoutMs: options.rewardTimeoutMs, passThreshold: options.passThreshold,
      });
    },
    ...(solveScript !== undefined ? { solveScript, oracle: bashOracle(solveScript) } : {}),
  };
}

/** What loading a folder gave: the good tasks and each broken one. */
export interface ClawGymBenchLoad {
  tasks: ClawGymBenchTask[];
  problems: TaskProblem[];
}

/** Load `dirs` a few at a time (file reads overlap; thousands of tasks load in about a second). */
async function loadEach(dirs: string[], options: ClawGymBenchOptions): Promise<ClawGymBenchLoad> {
  const slots: ({ task: ClawGymBenchTask } | { problem: TaskProblem })[] = new Array(dirs.length);
  let next = 0;
  const worker = async () => {
    while (next < dirs.length) {
      const i = next++;
      try {
        slots[i] = { task: await loadClawGymBenchTask(dirs[i]!, options) };
      } catch (err) {
        if (options.strict || !isClawGymError(err)) throw err;
        const msg = messageOf(err);
        const at = msg.indexOf(': ');
        slots[i] = { problem: { dir: dirs[i]!, where: at > 0 ? msg.slice(0, at) : dirs[i]!, message: at > 0 ? msg.slice(at + 2) : msg } };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, dirs.length) }, worker));
  return {
    tasks: slots.flatMap((s) => ('task' in s ? [s.task] : [])),
    problems: slots.flatMap((s) => ('problem' in s ? [s.problem] : [])),
  };
}

/**
 * The tasks in `dir` (the folder itself when it is a task, else each sub-folder), with every
 * broken task reported rather than stopping the folder, unless `strict`. Files beside the task
 * folders (a README) are ignored. Ids must be unique; a folder where no task loads is an error
 * listing why each failed.
 */
export async function loadClawGymBenchFolder(dir: string, options: ClawGymBenchOptions = {}): Promise<ClawGymBenchLoad> {
  const abs = resolve(dir);
  if (!(await isDir(abs))) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `ClawGym-Bench folder ${abs} does not exist`);
  const dirs = existsSync(join(abs, ENTRY)) ? [abs] : (await subdirs(abs)).map((d) => join(abs, d));
  if (dirs.length === 0) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `no ClawGym-Bench tasks in ${abs}`, { hint: `expected <task>/${ENTRY}, input_files/, reward/reward.sh` });
  const load = await loadEach(dirs, options);
  const seen = new Map<string, string>();
  const tasks: ClawGymBenchTask[] = [];
  for (const t of load.tasks) {
    const first = seen.get(t.id);
    if (first === undefined) { seen.set(t.id, t.dir); tasks.push(t); continue; }
    const problem = { dir: t.dir, where: t.dir, message: `task_id ${t.id} is also the id of ${first}` };
    if (options.strict) throw new ClawGymError(ErrorCodes.TASK_INVALID, `${problem.where}: ${problem.message}`);
    load.problems.push(problem);
  }
  if (tasks.length === 0) {
    throw new ClawGymError(ErrorCodes.TASK_INVALID, `no ClawGym-Bench task in ${abs} could be loaded:\n${load.problems.map((p) => `  ${p.where}: ${p.message}`).join('\n')}`);
  }
  return { tasks, problems: load.problems };
}

/** The tasks in `dir`; broken ones are reported through `options.log` (see {@link loadClawGymBenchFolder}). */
export async function loadClawGymBench(dir: string, options: ClawGymBenchOptions = {}): Promise<ClawGymBenchTask[]> {
  const { tasks, problems } = await loadClawGymBenchFolder(dir, options);
  // eslint-disable-next-line no-console
  const log = options.log ?? ((m: string) => console.warn(m));
  if (problems.length) {
    log(`clawgym: ${problems.length} of ${tasks.length + problems.length} ClawGym-Bench task(s) in ${resolve(dir)} skipped (strict: true makes this an error):\n` +
      problems.map((p) => `  ${p.where}: ${p.message.split('\n').join('\n    ')}`).join('\n'));
  }
  return tasks;
}

/** A task suite over a folder of ClawGym-Bench tasks (split by `testIds` or by hashing the id). */
export function clawgymBench(dir: string, options: ClawGymBenchOptions = {}): TaskSuite {
  let loaded: Promise<ClawGymBenchTask[]> | undefined;
  return {
    name: options.name ?? `clawgym-bench:${basename(resolve(dir))}`,
    // The folder holds the tasks, their verifiers and, by id, the split: the run lock hashes it.
    sources: [resolve(dir)],
    async tasks(split, opts) {
      return pickSplit(await (loaded ??= loadClawGymBench(dir, options)), split, opts, options);
    },
  };
}
