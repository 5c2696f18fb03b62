/**
 * Errors with stable codes and a cause, in the manner of Fastify's `createError`.
 * Every error ClawGym raises on purpose is a {@link ClawGymError}: the CLI prints its
 * message (and hint) without a stack trace, and tests match on `code`.
 */

/** All error codes ClawGym raises, one meaning each; `docs/errors.md` says what each means and what to do. */
export const ErrorCodes = {
  CONFIG_NOT_FOUND: 'CLAWGYM_CONFIG_NOT_FOUND',
  CONFIG_LOAD: 'CLAWGYM_CONFIG_LOAD',
  CONFIG_INVALID: 'CLAWGYM_CONFIG_INVALID',
  PLUGIN_NOT_FOUND: 'CLAWGYM_PLUGIN_NOT_FOUND',
  PLUGIN_INVALID: 'CLAWGYM_PLUGIN_INVALID',
  PLUGIN_DUPLICATE: 'CLAWGYM_PLUGIN_DUPLICATE',
  PLUGIN_INCOMPATIBLE: 'CLAWGYM_PLUGIN_INCOMPATIBLE',
  PLUGIN_APPLY: 'CLAWGYM_PLUGIN_APPLY',
  HOOK_FAILED: 'CLAWGYM_HOOK_FAILED',
  HOOK_TIMEOUT: 'CLAWGYM_HOOK_TIMEOUT',
  PROVIDER_MISSING: 'CLAWGYM_PROVIDER_MISSING',
  ALGORITHM_NEEDS_VALUES: 'CLAWGYM_ALGORITHM_NEEDS_VALUES',
  TRAINER_UNSUPPORTED: 'CLAWGYM_TRAINER_UNSUPPORTED',
  REPORTER_FAILED: 'CLAWGYM_REPORTER_FAILED',
  DOCTOR_MISSING: 'CLAWGYM_DOCTOR_MISSING',
  /** `run`, `eval` or `sft` refused to start: something the config needs is missing (the doctor's checks). */
  PREFLIGHT_FAILED: 'CLAWGYM_PREFLIGHT_FAILED',
  /** Every rollout of `run.maxInfraSteps` steps in a row (or of a held-out evaluation) failed for infrastructure reasons. */
  INFRA_FAILURES: 'CLAWGYM_INFRA_FAILURES',
  ENGINE_FAILED: 'CLAWGYM_ENGINE_FAILED',
  ENGINE_SYNC_FAILED: 'CLAWGYM_ENGINE_SYNC_FAILED',
  USAGE: 'CLAWGYM_USAGE',
  RECORDS_INVALID: 'CLAWGYM_RECORDS_INVALID',
  ROLLOUT_ID_INVALID: 'CLAWGYM_ROLLOUT_ID_INVALID',
  CHECKPOINT_MISSING: 'CLAWGYM_CHECKPOINT_MISSING',
  CHECKPOINT_MISMATCH: 'CLAWGYM_CHECKPOINT_MISMATCH',
  TASK_NEEDS_SANDBOX: 'CLAWGYM_TASK_NEEDS_SANDBOX',
  JUDGE_FAILED: 'CLAWGYM_JUDGE_FAILED',
  VERIFIER_FAILED: 'CLAWGYM_VERIFIER_FAILED',
  WORKSPACE_PATH_ESCAPE: 'CLAWGYM_WORKSPACE_PATH_ESCAPE',
  PROMPT_TOO_LONG: 'CLAWGYM_PROMPT_TOO_LONG',
  KERNELS_UNAVAILABLE: 'CLAWGYM_KERNELS_UNAVAILABLE',
  /** A task (or a task folder) that cannot be loaded: names the file, line and column. */
  TASK_INVALID: 'CLAWGYM_TASK_INVALID',
  /** A task needs something the configured sandbox provider cannot give (its own image). */
  SANDBOX_UNSUPPORTED: 'CLAWGYM_SANDBOX_UNSUPPORTED',
  /** Building a task's image failed; the message names the build log. */
  IMAGE_BUILD_FAILED: 'CLAWGYM_IMAGE_BUILD_FAILED',
  MODEL_FOLDER: 'CLAWGYM_MODEL_FOLDER',
  TEMPLATE_FAILED: 'CLAWGYM_TEMPLATE_FAILED',
  TRAINER_SERVICE: 'CLAWGYM_TRAINER_SERVICE',
  SANDBOX_UNISOLATED: 'CLAWGYM_SANDBOX_UNISOLATED',
  SANDBOX_SPEC_INVALID: 'CLAWGYM_SANDBOX_SPEC_INVALID',
  SANDBOX_FILE_FAILED: 'CLAWGYM_SANDBOX_FILE_FAILED',
  SANDBOX_IMAGE_MISSING: 'CLAWGYM_SANDBOX_IMAGE_MISSING',
  /** A command for a sandbox that is destroyed, or whose holder process died. */
  SANDBOX_GONE: 'CLAWGYM_SANDBOX_GONE',
  NOT_BUILT: 'CLAWGYM_NOT_BUILT',
  DOCKERD_FAILED: 'CLAWGYM_DOCKERD_FAILED',
  /** The docker sandbox's `hosts` option names a host it cannot use as written. */
  DOCKER_HOST_INVALID: 'CLAWGYM_DOCKER_HOST_INVALID',
  /** A Docker host stopped answering (or none answers): its rollouts are infra failures, retried elsewhere. */
  DOCKER_HOST_UNREACHABLE: 'CLAWGYM_DOCKER_HOST_UNREACHABLE',
  SESSION_EXISTS: 'CLAWGYM_SESSION_EXISTS',
  TRAINER_MODEL_STALE: 'CLAWGYM_TRAINER_MODEL_STALE',
  /** The embedded trainer's worker thread failed or died during a step. */
  TRAINER_WORKER_FAILED: 'CLAWGYM_TRAINER_WORKER_FAILED',
  /** A training request that a retry would apply twice failed in transit: the server has no `seq_id` to deduplicate it. */
  TRAINER_NOT_IDEMPOTENT: 'CLAWGYM_TRAINER_NOT_IDEMPOTENT',
  /** The Tinker service wants credentials from a command (`credential_cmd`), which ClawGym does not run. */
  TINKER_CREDENTIAL_CMD: 'CLAWGYM_TINKER_CREDENTIAL_CMD',
  /**
   * A task's `verify` threw an error of its own (not a ClawGymError it raised on purpose): a bug
   * in the task suite's plugin. The rollout is not retried and not scored; its stack is kept.
   */
  VERIFIER_BUG: 'CLAWGYM_VERIFIER_BUG',
  /** The agreement runner (our ClawGym-Task grader beside the reference one) could not run a case. */
  AGREEMENT_FAILED: 'CLAWGYM_AGREEMENT_FAILED',
  /**
   * A verifier read a path of the workspace that the agent left missing or as something else (a
   * folder where the answer file belongs): the agent's doing, so the rollout scores 0.
   */
  WORKSPACE_UNREADABLE: 'CLAWGYM_WORKSPACE_UNREADABLE',
  /** The trainer publishes weights the configured engine cannot load (a `tinker://` path handed to vLLM or SGLang). */
  WEIGHTS_UNREACHABLE: 'CLAWGYM_WEIGHTS_UNREACHABLE',
  /** Another live process (run, eval, sft, serve) holds the run folder's lock. */
  RUN_LOCKED: 'CLAWGYM_RUN_LOCKED',
  /** The run folder cannot be written (disk full, read-only, no permission, removed). */
  RUN_DIR_UNWRITABLE: 'CLAWGYM_RUN_DIR_UNWRITABLE',
  /** `clawgym run --frozen`: what the run would use differs from `clawgym.lock.json`. */
  LOCK_MISMATCH: 'CLAWGYM_LOCK_MISMATCH',
  /** `clawgym run --frozen` or `clawgym diff`: there is no lock to compare with. */
  LOCK_MISSING: 'CLAWGYM_LOCK_MISSING',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** An expected failure: a message for people, a code for programs, the cause for debugging. */
export class ClawGymError extends Error {
  /** Stable machine-readable code, e.g. `CLAWGYM_CONFIG_INVALID`. */
  readonly code: ErrorCode;
  /** What the user can do about it, printed under the message. */
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; hint?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ClawGymError';
    this.code = code;
    this.hint = options.hint;
  }
}

/** True for errors ClawGym raised on purpose (safe to print without a stack). */
export function isClawGymError(err: unknown): err is ClawGymError {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'string' &&
    String((err as unknown as { code: string }).code).startsWith('CLAWGYM_');
}

/** The message of anything thrown, without assuming it is an Error. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}
