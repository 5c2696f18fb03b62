import type { CanonicalMessage } from './messages';
import type { Sandbox, SandboxLimits, TaskEnvironment } from './sandbox';

/**
 * What a verifier may use besides the workspace: the rollout's sandbox, still alive after the
 * harness exited, for verifier scripts that must run inside it (Harbor's tests/test.sh,
 * ClawGym-Bench's reward.sh). Files the verifier needs are copied in only now, so the agent never
 * saw them.
 */
export interface VerifyContext {
  sandbox?: Sandbox;
  /**
   * The text of the agent's last reply (the last main-agent call's answer, tool calls left
   * out), for verifiers that grade the answer as well as the files (ClawGym-Task's
   * `final_message`). Unset when the rollout made no call.
   */
  finalMessage?: string;
  /**
   * The main agent's conversation as the proxy last saw it: the last main-agent request's
   * messages followed by the reply the proxy returned (every earlier turn is in that request's
   * history). For verifiers that read a transcript (PinchBench).
   */
  conversation?: CanonicalMessage[];
}

/** What a verifier concludes about a final workspace. */
export interface Verdict {
  /** In [0, 1]. */
  reward: number;
  pass: boolean;
  /** Human-readable reasons, shown by `clawgym inspect` and in reports. */
  details: string;
}

/** Host-side access to a rollout's workspace (setup before, verification after the harness). */
export interface Workspace {
  /** Absolute host path of the workspace root. */
  readonly root: string;
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: string | Buffer): Promise<void>;
  exists(path: string): Promise<boolean>;
  list(dir?: string): Promise<string[]>;
}

/**
 * One task: an instruction, an initial workspace and a verifier. Anything the verifier
 * uses to check the answer stays out of the workspace until the harness has finished.
 */
/**
 * One turn of a task's oracle solution: the tool calls a perfect agent makes, in the agentloop
 * harness's tool vocabulary (`read_file`, `write_file`, `list_files`, `bash`). The scripted
 * engine plays them to check verifiers (100% with the oracle) and to make demonstrations.
 */
export interface OracleTurn {
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
}

export interface Task {
  id: string;
  category: string;
  instruction: string;
  /** Lay out the initial workspace. */
  setup(workspace: Workspace): Promise<void>;
  /** Score the final workspace. Runs after the harness has exited. */
  verify(workspace: Workspace, context?: VerifyContext): Promise<Verdict>;
  /** Wall-clock limit for the harness on this task. */
  timeLimitMs?: number;
  /**
   * A solution, turn by turn, when the task has one (see {@link OracleTurn}); a function when
   * making it is asynchronous (e.g. building the expected office file).
   */
  oracle?: OracleTurn[] | (() => Promise<OracleTurn[]>);
  /** 1 (easiest) to 3, for curricula and reports. */
  difficulty?: number;
  /** The image the task's rollouts run in, when it has one of its own. */
  environment?: TaskEnvironment;
  /** Sandbox limits the task asks for (Harbor's `[environment]` cpus, memory); they override the run's. */
  limits?: SandboxLimits;
  /**
   * Where the task's workspace must be inside the sandbox (absolute), when its files or its
   * verifier name that path (ClawGym-Task: `/root/.openclaw/workspace`). The harness works
   * there; see `SandboxSpec.workspacePath`.
   */
  workspacePath?: string;
}

export type Split = 'train' | 'test';

/** A collection of tasks with train/test splits; registered by task plugins. */
export interface TaskSuite {
  readonly name: string;
  /**
   * The files and folders its tasks are read from (tasks, verifiers, splits), absolute: the run
   * lock hashes their content, so an edited verifier script changes the suite's hash. Unset for
   * suites made in code (their tasks' text and functions are hashed instead).
   */
  readonly sources?: readonly string[];
  /**
   * The tasks of a split. `options` are the config slot's (`tasks: [{ use: 'builtin', options }]`);
   * a suite validates them with its schema.
   */
  tasks(split: Split, options: { seed: number; limit?: number; options?: Record<string, unknown> }): Promise<Task[]>;
}
