/**
 * Harbor / Terminal-Bench tasks: `instruction.md`, `task.toml`, `environment/` (the task's
 * image: `environment/Dockerfile` is built once per content hash by a sandbox provider that runs
 * images, and the rollouts run in it; with `environment: 'copy'` the folder's files are copied
 * into the workspace instead and the Dockerfile is ignored), `tests/test.sh` (copied into the
 * sandbox at verify time and run there with bash) and an optional `solution/solve.sh` (the
 * task's `oracle`: one bash tool call running it with bash from the workspace).
 *
 * Reward: Harbor's test.sh writes `/logs/verifier/reward.txt` (a number) or `reward.json`
 * (`{"reward": x}`). `/logs` is not writable in ClawGym sandboxes, so the script is run with
 * `REWARD_DIR` (and `LOGS_DIR`, `TESTS_DIR`, `WORKSPACE`) set, with the literal paths
 * `/logs/verifier` and `/tests` in test.sh rewritten to the copied folders, and from the
 * workspace as its working folder. The reward is read from `$REWARD_DIR/reward.txt`, then
 * `$REWARD_DIR/reward.json`, then `reward.txt` / `reward.json` in the workspace (which are
 * removed before the script runs, so an agent cannot write its own reward).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { checkWorkspacePath, ClawGymError, ErrorCodes, isClawGymError, messageOf, type SandboxLimits, type Task, type TaskEnvironment, type TaskSuite, type Verdict, type VerifyContext } from '@clawgym/core';
import { copyToWorkspace, filesUnder, isDir, subdirs } from './files';
import { bashOracle } from './oracle';
import { pickSplit, type SplitOptions } from '@clawgym/core';
import { copyInHidden, howItEnded, outputTail, parseRewardJson, parseScore, readInside, removeStale, requireSandbox } from './verifier-script';

/** What ClawGym reads of a `task.toml`. */
export interface HarborConfig {
  difficulty?: string;
  category?: string;
  tags: string[];
  /** `[agent] timeout_sec`, in ms. */
  agentTimeoutMs?: number;
  /** `[verifier] timeout_sec`, in ms (default 600 s). */
  verifierTimeoutMs: number;
  /** `[verifier] env`: extra environment of test.sh. */
  verifierEnv: Record<string, string>;
  /** `[environment]`: resources (applied as sandbox limits), build timeout, a prebuilt image. */
  environment: { cpus?: number; memoryMb?: number; buildTimeoutMs?: number; dockerImage?: string };
}

/** A loaded Harbor task: a {@link Task} (with `oracle` from solution/solve.sh, when shipped) and its metadata. */
export interface HarborTask extends Task {
  readonly format: 'harbor';
  readonly dir: string;
  readonly config: HarborConfig;
  /** The text of solution/solve.sh, when the task ships one (also the task's `oracle`). */
  readonly solveScript?: string;
}

/** Options of the Harbor loader and suite. */
export interface HarborOptions extends SplitOptions {
  /** Reward at or above which a verdict passes (default 1). */
  passThreshold?: number;
  /** Suite name (default `harbor:<folder name>`). */
  name?: string;
  /**
   * How a task's `environment/` is used: `image` (default) runs the task in the image its
   * Dockerfile builds (a sandbox provider with images is needed, e.g. Docker); `copy` copies the
   * folder's files into the workspace and ignores the Dockerfile, for machines without Docker —
   * the Dockerfile's own setup then never happens.
   */
  environment?: 'image' | 'copy';
  /** Fail on the first broken task instead of loading the good ones and reporting the rest. */
  strict?: boolean;
  /** Where reports of broken tasks go (default: stderr). */
  log?: (message: string) => void;
}

/** A task folder that could not be loaded, and why. */
export interface TaskProblem {
  /** The task folder. */
  dir: string;
  /** The file at fault, with `:line:column` when the parser gave them. */
  where: string;
  message: string;
}

const DOCKER_FILES = /^(Dockerfile|docker-compose\.ya?ml|\.dockerignore)$/;
const REWARD_FILES = ['reward.txt', 'reward.json'];

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
const table = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

const DIFFICULTY: Record<string, number> = { easy: 1, medium: 2, hard: 3 };

/** Read the fields ClawGym uses from a task.toml's text. */
export async function parseHarborToml(text: string, where: string): Promise<HarborConfig> {
  // smol-toml ships ESM types; a dynamic import keeps this CommonJS package type-correct.
  const { parse } = await import('smol-toml');
  let doc: Record<string, unknown>;
  try { doc = parse(text) as Record<string, unknown>; } catch (e) {
    // smol-toml's TomlError carries the line, the column and a code frame with a ^ pointer.
    const { line, column } = e as { line?: number; column?: number };
    const at = line ? `${where}:${line}:${column ?? 1}` : where;
    throw new ClawGymError(ErrorCodes.TASK_INVALID, `${at}: not valid TOML: ${(e as Error).message.replace(/^Invalid TOML document: /, '')}`, { cause: e });
  }
  const meta = table(doc.metadata);
  const verifier = table(doc.verifier);
  const agent = table(doc.agent);
  const env = table(doc.environment);
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
  const agentSec = num(agent.timeout_sec);
  return {
    difficulty: str(meta.difficulty),
    category: str(meta.category),
    tags: Array.isArray(meta.tags) ? meta.tags.filter((t): t is string => typeof t === 'string') : [],
    agentTimeoutMs: agentSec === undefined ? undefined : agentSec * 1000,
    verifierTimeoutMs: (num(verifier.timeout_sec) ?? 600) * 1000,
    verifierEnv: Object.fromEntries(Object.entries(table(verifier.env)).filter(([, v]) => typeof v === 'string')) as Record<string, string>,
    environment: {
      cpus: num(env.cpus),
      // memory_mb since Harbor's schema 1.1; the older `memory = "2G"` spelling is still read.
      memoryMb: num(env.memory_mb) ?? sizeMb(env.memory, `${where} [environment] memory`),
      buildTimeoutMs: num(env.build_timeout_sec) === undefined ? undefined : num(env.build_timeout_sec)! * 1000,
      dockerImage: str(env.docker_image),
    },
  };
}

/** `"2G"`, `"512M"`, `"1024"` (MB) as megabytes. */
function sizeMb(v: unknown, where: string): number | undefined {
  if (v === undefined) return undefined;
  const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(v) : undefined;
  if (typeof v === 'number' && v > 0) return v;
  if (!m) throw new ClawGymError(ErrorCodes.TASK_INVALID, `${where} is ${JSON.stringify(v)}: expected a size such as "2G" or "512M"`, { hint: 'or use memory_mb = 2048' });
  const scale: Record<string, number> = { '': 1, k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };
  return Number(m[1]) * scale[m[2]!.toLowerCase()]!;
}

/** sha256 of a folder's files (paths, modes and contents): the image is rebuilt when it changes. */
export async function contentHash(dir: string): Promise<string> {
  const h = createHash('sha256');
  for (const rel of await filesUnder(dir)) {
    const path = join(dir, rel);
    h.update(`${rel}\0${(await stat(path)).mode & 0o111 ? 'x' : '-'}\0`);
    h.update(await readFile(path));
    h.update('\0');
  }
  return h.digest('hex');
}

/** test.sh with Harbor's container paths pointed at the copied folders. */
export function rewriteHarborPaths(script: string, paths: { rewardDir: string; testsDir: string }): string {
  return script
    .replace(/(?<![\w.\-/$])\/logs\/verifier(?![\w.-])/g, paths.rewardDir)
    .replace(/(?<![\w.\-/$])\/tests(?![\w.-])/g, paths.testsDir);
}

/** One Harbor task from its folder. */
export async function loadHarborTask(dir: string, options: HarborOptions = {}): Promise<HarborTask> {
  const abs = resolve(dir);
  const need = (f: string) => { if (!existsSync(join(abs, f))) throw new ClawGymError(ErrorCodes.TASK_INVALID, `Harbor task ${abs} has no ${f}`); };
  need('instruction.md');
  need('tests/test.sh');
  const id = basename(abs);
  const tomlPath = join(abs, 'task.toml');
  const config = await parseHarborToml(existsSync(tomlPath) ? await readFile(tomlPath, 'utf8') : '', tomlPath);
  const instruction = (await readFile(join(abs, 'instruction.md'), 'utf8')).trim();
  const envDir = join(abs, 'environment');
  const solve = join(abs, 'solution', 'solve.sh');
  const solveScript = existsSync(solve) ? await readFile(solve, 'utf8') : undefined;
  const mode = options.environment ?? 'image';
  const environment = mode === 'image' ? await imageOf(abs, envDir, config, tomlPath) : undefined;
  // Copied instead of built: the files still go where the image would have them, its WORKDIR.
  const workspacePath = mode === 'copy' ? await workdirOf(join(envDir, 'Dockerfile')) : undefined;
  const limits: SandboxLimits = {
    ...(config.environment.cpus !== undefined ? { cpus: config.environment.cpus } : {}),
    ...(config.environment.memoryMb !== undefined ? { memoryMb: config.environment.memoryMb } : {}),
  };

  const verify = async (_ws: unknown, context?: VerifyContext): Promise<Verdict> => {
    const sandbox = requireSandbox(context, id);
    const stale = await removeStale(sandbox, REWARD_FILES);
    const hidden = await copyInHidden(sandbox, join(abs, 'tests'), 'tests');
    const testSh = posix.join(hidden.dir, 'test.sh');
    await sandbox.writeFile(testSh, rewriteHarborPaths(await readFile(join(abs, 'tests', 'test.sh'), 'utf8'), { rewardDir: hidden.rewardDir, testsDir: hidden.dir }));
    const run = await sandbox.exec(['bash', testSh], {
      cwd: sandbox.workspacePath,
      env: { ...config.verifierEnv, REWARD_DIR: hidden.rewardDir, LOGS_DIR: posix.dirname(hidden.rewardDir), TESTS_DIR: hidden.dir, WORKSPACE: sandbox.workspacePath },
      timeoutMs: config.verifierTimeoutMs,
    });
    const ran = `tests/test.sh ${howItEnded(run, config.verifierTimeoutMs)}`;
    const notes = stale.length ? [`removed ${stale.join(', ')} the agent had left in the workspace before the tests ran`] : [];
    for (const [path, parse] of [
      [posix.join(hidden.rewardDir, 'reward.txt'), parseScore],
      [posix.join(hidden.rewardDir, 'reward.json'), parseRewardJson],
      [posix.join(sandbox.workspacePath, 'reward.txt'), parseScore],
      [posix.join(sandbox.workspacePath, 'reward.json'), parseRewardJson],
    ] as const) {
      const text = await readInside(sandbox, path);
      if (text === undefined) continue;
      const got = parse(text);
      if ('error' in got) return { reward: 0, pass: false, details: [`${path} ${got.error.startsWith('"') ? `holds ${got.error}` : got.error} (${ran})`, ...notes, outputTail(run)].filter(Boolean).join('\n') };
      const pass = got.reward >= (options.passThreshold ?? 1);
      const summary = `reward ${got.reward} from ${path} (${ran})`;
      return { reward: got.reward, pass, details: [summary, got.note, ...notes, pass ? '' : outputTail(run)].filter(Boolean).join('\n') };
    }
    return { reward: 0, pass: false, details: [`tests/test.sh wrote no reward.txt or reward.json (${ran})`, ...notes, outputTail(run)].filter(Boolean).join('\n') };
  };

  return {
    format: 'harbor',
    dir: abs,
    config,
    id,
    category: config.category ?? 'harbor',
    instruction,
    timeLimitMs: config.agentTimeoutMs,
    difficulty: config.difficulty ? DIFFICULTY[config.difficulty.toLowerCase()] : undefined,
    async setup(ws) {
      // In its image the task's files are where its Dockerfile put them.
      if (!environment && await isDir(envDir)) await copyToWorkspace(envDir, await filesUnder(envDir, (rel) => DOCKER_FILES.test(rel)), ws);
    },
    verify,
    ...(environment ? { environment } : {}),
    ...(workspacePath ? { workspacePath } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(solveScript !== undefined ? { solveScript, oracle: bashOracle(solveScript) } : {}),
  };
}

/**
 * The WORKDIR a Dockerfile ends in (each relative one resolved against the one before), when it
 * is a path a sandbox may place a workspace at; undefined otherwise (none, `/`, a `$VARIABLE`).
 */
export async function workdirOf(dockerfile: string): Promise<string | undefined> {
  if (!existsSync(dockerfile)) return undefined;
  let dir = '/';
  for (const m of (await readFile(dockerfile, 'utf8')).matchAll(/^\s*WORKDIR\s+(\S+)\s*$/gim)) {
    const w = m[1]!.replace(/^["']|["']$/g, '');
    if (w.includes('$')) return undefined;
    dir = posix.resolve(dir, w);
  }
  if (dir === '/') return undefined;
  try { return checkWorkspacePath(dir, '/home/agent'); /* HOME in every sandbox */ } catch { return undefined; }
}

/** The task's image: built from environment/Dockerfile (or Harbor's prebuilt `docker_image`). */
async function imageOf(abs: string, envDir: string, config: HarborConfig, tomlPath: string): Promise<TaskEnvironment | undefined> {
  for (const compose of ['docker-compose.yaml', 'docker-compose.yml']) {
    if (existsSync(join(envDir, compose))) {
      throw new ClawGymError(ErrorCodes.TASK_INVALID,
        `${join(envDir, compose)}: docker-compose environments are not supported: ClawGym runs each rollout in one container, so the file's services, networks and volumes would not be applied`,
        { hint: "if the Dockerfile alone is the environment, remove the compose file; or load the folder with environment: 'copy' to run without the image" });
    }
  }
  const { dockerImage, buildTimeoutMs } = config.environment;
  const hasDockerfile = existsSync(join(envDir, 'Dockerfile'));
  if (!hasDockerfile && !dockerImage) return undefined;
  return {
    contextDir: envDir,
    dockerfile: 'Dockerfile',
    hash: hasDockerfile ? await contentHash(envDir) : createHash('sha256').update(dockerImage!).digest('hex'),
    ...(dockerImage ? { image: dockerImage } : {}),
    ...(buildTimeoutMs ? { buildTimeoutMs } : {}),
    source: `Harbor task ${basename(abs)} (${tomlPath})`,
  };
}

/** What loading a folder of Harbor tasks gave: the good tasks and each broken one. */
export interface HarborLoad {
  tasks: HarborTask[];
  problems: TaskProblem[];
}

/**
 * Harbor tasks in `dir` (the folder itself when it is a task, else each sub-folder holding an
 * instruction.md), with every broken task reported rather than stopping the folder, unless
 * `strict`. A folder where no task loads is an error listing why each failed.
 */
export async function loadHarborFolder(dir: string, options: HarborOptions = {}): Promise<HarborLoad> {
  const abs = resolve(dir);
  if (!(await isDir(abs))) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `Harbor task folder ${abs} does not exist`);
  const dirs = existsSync(join(abs, 'instruction.md')) ? [abs] : (await subdirs(abs)).map((d) => join(abs, d)).filter((d) => existsSync(join(d, 'instruction.md')));
  if (dirs.length === 0) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `no Harbor tasks in ${abs}`, { hint: 'expected <task>/instruction.md, task.toml, tests/test.sh' });
  const tasks: HarborTask[] = [];
  const problems: TaskProblem[] = [];
  for (const d of dirs) {
    try {
      tasks.push(await loadHarborTask(d, options));
    } catch (err) {
      if (options.strict || !isClawGymError(err)) throw err;
      const msg = messageOf(err);
      const m = /^(\/\S+?(?::\d+:\d+)?): ([\s\S]*)$/.exec(msg);
      problems.push({ dir: d, where: m ? m[1]! : d, message: m ? m[2]! : msg });
    }
  }
  if (tasks.length === 0) {
    throw new ClawGymError(ErrorCodes.TASK_INVALID, `no Harbor task in ${abs} could be loaded:\n${problems.map((p) => `  ${p.where}: ${p.message}`).join('\n')}`);
  }
  return { tasks, problems };
}

/** Harbor tasks in `dir`; broken ones are reported through `options.log` (see {@link loadHarborFolder}). */
export async function loadHarbor(dir: string, options: HarborOptions = {}): Promise<HarborTask[]> {
  const { tasks, problems } = await loadHarborFolder(dir, options);
  // eslint-disable-next-line no-console
  const log = options.log ?? ((m: string) => console.warn(m));
  if (problems.length) {
    log(`clawgym: ${problems.length} of ${tasks.length + problems.length} Harbor task(s) in ${resolve(dir)} skipped (strict: true makes this an error):\n` +
      problems.map((p) => `  ${p.where}: ${p.message.split('\n').join('\n    ')}`).join('\n'));
  }
  return tasks;
}

/** A task suite over a folder of Harbor tasks (split by `testIds` or by hashing the task name). */
export function harbor(dir: string, options: HarborOptions = {}): TaskSuite {
  let loaded: Promise<HarborTask[]> | undefined;
  return {
    name: options.name ?? `harbor:${basename(resolve(dir))}`,
    // The folder holds the tasks, their verifiers and, by id, the split: the run lock hashes it.
    sources: [resolve(dir)],
    async tasks(split, opts) {
      return pickSplit(await (loaded ??= loadHarbor(dir, options)), split, opts, options);
    },
  };
}
