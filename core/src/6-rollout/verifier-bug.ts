import type { Task, Verdict } from '../contracts/task';
import { ClawGymError, ErrorCodes, isClawGymError, messageOf } from '../errors';

/** A rollout's failure that is a plugin's bug, kept whole: in `eval.json`, and as the cause of the error that stops a run. */
export interface RolloutFault {
  code: string;
  message: string;
  /** The stack of the plugin's own error. */
  stack?: string;
}

const hint = 'Report it to the plugin\'s authors with the stack: CLAWGYM_DEBUG=1 prints it, and eval.json keeps it under the rollout\'s "fault". `clawgym eval --engine oracle` with the suite reproduces it.';

/**
 * A verifier that threw an error of its own — not a ClawGymError it raised on purpose (its
 * sandbox command failed, its judge did not answer), which stays an infrastructure failure and
 * is retried — is a bug in the task suite's plugin: retrying cannot help, and it is not the
 * agent's doing. `suite` names the suite and its plugin (`task suite "x" (plugin "y", pkg@1.0.0)`).
 */
export function verifierBug(task: Pick<Task, 'id'>, suite: string | undefined, err: unknown): ClawGymError {
  const what = err instanceof Error ? `${err.name}: ${err.message}` : messageOf(err);
  return new ClawGymError(ErrorCodes.VERIFIER_BUG,
    `the verifier of task "${task.id}"${suite ? ` in ${suite}` : ''} threw ${what}. This is a bug in the plugin, not the agent's doing or the machine's: the rollout is neither scored nor retried`,
    { cause: err, hint });
}

/**
 * The verdict for a verifier that stopped on the agent's workspace (a folder where the answer
 * file belongs, a file it reads that the agent never wrote): reward 0, as a wrong answer.
 */
export function workspaceVerdict(err: unknown): Verdict | undefined {
  if (!isClawGymError(err) || err.code !== ErrorCodes.WORKSPACE_UNREADABLE) return undefined;
  return { reward: 0, pass: false, details: `the workspace is not as the task asks: ${err.message}` };
}

/**
 * The fault a rollout report keeps when a plugin's bug ended it — a {@link verifierBug}, or a
 * hook tap that threw (`beforeRollout`): never retried, since it would fail the same way again.
 */
export function faultOf(err: unknown): RolloutFault | undefined {
  if (!isClawGymError(err) || (err.code !== ErrorCodes.VERIFIER_BUG && err.code !== ErrorCodes.HOOK_FAILED)) return undefined;
  const cause = err.cause;
  return { code: err.code, message: err.message, ...(cause instanceof Error && cause.stack ? { stack: cause.stack } : {}) };
}

/** The error that stops a run or an evaluation on a rollout's fault, with the plugin's stack as its cause. */
export function faultError(fault: RolloutFault): ClawGymError {
  const cause = Object.assign(new Error(fault.message), fault.stack ? { stack: fault.stack } : {});
  return new ClawGymError(fault.code as ClawGymError['code'], fault.message, {
    cause, hint: fault.code === ErrorCodes.VERIFIER_BUG ? hint : 'A plugin\'s hook tap threw: a bug in that plugin. Report it to its authors with the stack (CLAWGYM_DEBUG=1 prints it; eval.json keeps it under the rollout\'s "fault").',
  });
}
