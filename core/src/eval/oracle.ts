import type { OracleTurn, Task } from '../contracts/task';
import type { ChatTemplate, Tokenizer } from '../contracts/engine';
import { ScriptedEngine } from '../4-proxy/engine/scripted';

/** A task's oracle turns, made if the task builds them asynchronously. */
export async function oracleOf(task: Task): Promise<OracleTurn[] | undefined> {
  return typeof task.oracle === 'function' ? task.oracle() : task.oracle;
}

/** The rollout id a session belongs to (infra retries add `.retryN`). */
export const rolloutOf = (sessionId: string) => sessionId.replace(/\.retry\d+$/, '');

/**
 * A scripted engine that plays each task's oracle: call N of a rollout makes the oracle's turn
 * N of tool calls, then says it is done. With it every verifier must pass (100%); it is also
 * how demonstrations for a model that starts from nothing are made.
 */
export function oracleEngine(taskOf: (rolloutId: string) => Task | undefined, template?: { tokenizer: Tokenizer; chatTemplate: ChatTemplate }): ScriptedEngine {
  return new ScriptedEngine(({ sessionId, callIndex }) => {
    const oracle = taskOf(rolloutOf(sessionId))?.oracle;
    const turns = Array.isArray(oracle) ? oracle : [];
    return callIndex < turns.length ? { toolCalls: turns[callIndex]!.toolCalls } : { text: 'Done.' };
  }, template);
}

/** An engine that only ever answers "I don't know." — every task must fail with it. */
export function nullEngine(): ScriptedEngine {
  return new ScriptedEngine(() => ({ text: "I don't know." }));
}
