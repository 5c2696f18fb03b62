import type { OracleTurn, Task } from '../contracts/task';
import { isSideCall } from '../contracts/records';
import type { ChatTemplate, Tokenizer } from '../contracts/engine';
import { ScriptedEngine } from '../4-proxy/engine/scripted';

/** A task's oracle turns, made if the task builds them asynchronously. */
export async function oracleOf(task: Task): Promise<OracleTurn[] | undefined> {
  return typeof task.oracle === 'function' ? task.oracle() : task.oracle;
}

/** The rollout id a session belongs to (infra retries add `.retryN`). */
export const rolloutOf = (sessionId: string) => sessionId.replace(/\.retry\d+$/, '');

/**
 * A scripted engine that plays each task's oracle: main call N of a rollout makes the oracle's
 * turn N of tool calls, then says it is done. Side calls (a title, a summary, a subagent: the
 * harness's classifier says which) are answered "Done." and not counted, so one sent beside the
 * agent's first call, before it or after, cannot take the oracle's turn. With it every verifier
 * must pass (100%); it is also how demonstrations for a model that starts from nothing are made.
 */
export function oracleEngine(taskOf: (rolloutId: string) => Task | undefined, template?: { tokenizer: Tokenizer; chatTemplate: ChatTemplate }): ScriptedEngine {
  return new ScriptedEngine(({ sessionId, mainCallIndex, role }) => {
    if (isSideCall(role)) return { text: 'Done.' };
    const oracle = taskOf(rolloutOf(sessionId))?.oracle;
    const turns = Array.isArray(oracle) ? oracle : [];
    return mainCallIndex < turns.length ? { toolCalls: turns[mainCallIndex]!.toolCalls } : { text: 'Done.' };
  }, template);
}

/** An engine that only ever answers "I don't know." — every task must fail with it. */
export function nullEngine(): ScriptedEngine {
  return new ScriptedEngine(() => ({ text: "I don't know." }));
}
