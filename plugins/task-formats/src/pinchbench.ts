/**
 * PinchBench (pinchbench/skill): the folder of the repository (`tasks/task_*.md`, `assets/`) as the
 * suite `pinchbench:<folder name>`. Each task's workspace files are laid in at setup; its grading
 * (pinchbench-grade.ts) reads an OpenClaw transcript synthesized from the proxy's view of the
 * rollout (openclaw-transcript.ts), so rollouts of any harness are graded.
 *
 * Without a judge: hybrid tasks score their automated part only (the verdict says so), and
 * llm_judge tasks are left out with one line each. Multi-session tasks (`multi_session: true`) are
 * left out too: a rollout here is one session. The suite loads whatever remains.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ClawGymError, ErrorCodes, pickSplit, type SplitOptions, type Task, type TaskSuite, type Verdict } from '@clawgym/core';
import type { TaskProblem } from './harbor';
import { openclawTranscript } from './openclaw-transcript';
import { combineGrades, gradeAutomated, gradeByJudge, type PartGrade, type PinchJudge } from './pinchbench-grade';
import { parsePinchBenchTask, type PinchBenchSpec } from './pinchbench-task';
import { requireSandbox } from './verifier-script';

export interface PinchBenchOptions extends SplitOptions {
  /** The judge for llm_judge and hybrid tasks (an OpenAI-compatible chat endpoint). */
  judge?: PinchJudge;
  /** Score at or above which a verdict passes (default 1: every check met). */
  passThreshold?: number;
  /** Suite name (default `pinchbench:<folder name>`). */
  name?: string;
  /** Where lines about tasks left out go (default console.warn). */
  log?: (msg: string) => void;
}

export interface PinchBenchTask extends Task {
  readonly format: 'pinchbench';
  readonly file: string;
  readonly spec: PinchBenchSpec;
}

/** Where the task files and the assets are: `<dir>/tasks` and `<dir>/assets`, or `dir` itself and `<dir>/../assets`. */
function layout(dir: string): { tasks: string; assets: string } {
  return existsSync(join(dir, 'tasks')) ? { tasks: join(dir, 'tasks'), assets: join(dir, 'assets') } : { tasks: dir, assets: join(dir, '..', 'assets') };
}

function verdictOf(grade: PartGrade, options: PinchBenchOptions, lead: string): Verdict {
  const reward = Math.min(1, Math.max(0, grade.score));
  const pass = reward >= (options.passThreshold ?? 1);
  const parts = Object.entries(grade.breakdown).map(([k, v]) => `${k}=${v}`).join(' ');
  return { reward, pass, details: [lead, parts, grade.notes].filter(Boolean).join('\n') };
}

function taskOf(file: string, spec: PinchBenchSpec, assets: string, options: PinchBenchOptions): PinchBenchTask {
  const judge = options.judge;
  return {
    format: 'pinchbench',
    file,
    spec,
    id: spec.id,
    category: spec.category || 'pinchbench',
    instruction: spec.prompt,
    timeLimitMs: spec.timeoutSeconds * 1000,
    async setup(ws) {
      for (const f of spec.workspaceFiles) {
        if ('content' in f) await ws.writeFile(f.path, f.content);
        else await ws.writeFile(f.dest, await readFile(join(assets, f.source)));
      }
    },
    async verify(_ws, context) {
      const sandbox = requireSandbox(context, spec.id);
      const transcript = openclawTranscript(context?.conversation ?? [], { sessionId: spec.id, cwd: sandbox.workspacePath });
      if (spec.gradingType === 'automated') return verdictOf(await gradeAutomated(sandbox, spec, transcript), options, `automated score from grade()`);
      const auto = await gradeAutomated(sandbox, spec, transcript);
      if (!judge) return verdictOf(auto, options, `automated part only: no judge is configured, so the llm_judge part (weight ${spec.weights.llmJudge}) was not graded`);
      const judged = await gradeByJudge(judge, spec, transcript);
      return verdictOf(combineGrades(spec, auto, judged), options, `hybrid: automated ${auto.score} × ${spec.weights.automated}, judge ${judged.score} × ${spec.weights.llmJudge}`);
    },
  };
}

/** What loading gave: the tasks, and each task left out or broken with why. */
export interface PinchBenchLoad { tasks: PinchBenchTask[]; problems: TaskProblem[] }

/** The PinchBench tasks in `dir` (see the file comment). */
export async function loadPinchBenchFolder(dir: string, options: PinchBenchOptions = {}): Promise<PinchBenchLoad> {
  const abs = resolve(dir);
  const { tasks: tasksDir, assets } = layout(abs);
  if (!existsSync(tasksDir)) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `PinchBench folder ${abs} does not exist`);
  const files = (await readdir(tasksDir)).filter((f) => /^task_.*\.md$/.test(f)).sort();
  if (!files.length) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `no PinchBench tasks in ${tasksDir}`, { hint: 'expected tasks/task_*.md (the pinchbench/skill repository)' });
  const tasks: PinchBenchTask[] = [];
  const problems: TaskProblem[] = [];
  for (const f of files) {
    const file = join(tasksDir, f);
    const skip = (message: string) => problems.push({ dir: file, where: file, message });
    let spec: PinchBenchSpec;
    try { spec = parsePinchBenchTask(await readFile(file, 'utf8')); } catch (e) { skip((e as Error).message); continue; }
    if (!spec.id) { skip('its front matter has no id'); continue; }
    if (!spec.prompt) { skip('it has no ## Prompt section'); continue; }
    if (spec.multiSession) { skip('left out: a multi-session task (a rollout here is one session)'); continue; }
    if (spec.gradingType === 'llm_judge' && !options.judge) { skip('left out: graded by an LLM judge only, and no judge is configured (pinchbench: [{ dir, judge }])'); continue; }
    const missing = spec.workspaceFiles.flatMap((w) => ('source' in w && !existsSync(join(assets, w.source)) ? [w.source] : []));
    if (missing.length) { skip(`its workspace_files are missing from ${assets}: ${missing.join(', ')}`); continue; }
    tasks.push(taskOf(file, spec, assets, options));
  }
  if (!tasks.length) throw new ClawGymError(ErrorCodes.TASK_INVALID, `no PinchBench task in ${abs} could be loaded:\n${problems.map((p) => `  ${p.where}: ${p.message}`).join('\n')}`);
  return { tasks, problems };
}

/** A task suite over a PinchBench folder; tasks left out are logged one line each. */
export function pinchbench(dir: string, options: PinchBenchOptions = {}): TaskSuite {
  let loaded: Promise<PinchBenchTask[]> | undefined;
  // eslint-disable-next-line no-console
  const log = options.log ?? ((m: string) => console.warn(m));
  const load = async () => {
    const { tasks, problems } = await loadPinchBenchFolder(dir, options);
    for (const p of problems) log(`clawgym: PinchBench ${basename(p.where)}: ${p.message}`);
    return tasks;
  };
  return {
    name: options.name ?? `pinchbench:${basename(resolve(dir))}`,
    // The folder holds the tasks, their verifiers and, by id, the split: the run lock hashes it.
    sources: [resolve(dir)],
    async tasks(split, opts) {
      return pickSplit(await (loaded ??= load()), split, opts, options);
    },
  };
}
