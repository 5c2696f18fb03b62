import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isSideCall, type CallRole, type ModelCallRecord, type WireFormat } from '../contracts/records';
import { titoStats } from '../5-records/tito-stats';

/** What the checks read of a {@link runHarnessOnce} result. */
export interface E2eRun {
  result: { exitCode: number | null; timedOut: boolean; logTail?: string };
  records: readonly ModelCallRecord[];
  sandbox: { workspaceHostPath: string };
}

/** What {@link expectHarnessRollout} checks beyond the harness's clean exit. */
export interface RolloutExpectation {
  /** Every call came in this wire format. */
  wireFormat?: WireFormat;
  /** Files the task leaves in the workspace, with their contents (default: `hello.txt` holding `hi`). */
  files?: Record<string, string>;
  /** How many calls were recorded, side calls included: a number, or `{ min }`. */
  calls?: number | { min: number };
  /** How many main calls (default: not checked). */
  mainCalls?: number | { min: number };
  /** The side calls by role, exactly (default: not checked). */
  sideRoles?: Partial<Record<CallRole, number>>;
  /** Every later main call reuses the previous ids, no fork (default: true). */
  wholeReuse?: boolean;
}

const count = (n: number, want: number | { min: number }) =>
  (typeof want === 'number' ? expect(n).toBe(want) : expect(n).toBeGreaterThanOrEqual(want.min));

/**
 * The checks every real-harness e2e test makes of a rollout: the CLI exited 0 in time, the task's
 * files are written, every call is in the harness's wire format and none failed, the side calls
 * are the ones expected, and (unless told otherwise) TITO reuse is whole with no fork. Returns
 * the TITO stats, for the checks a test adds of its own.
 */
export async function expectHarnessRollout(run: E2eRun, o: RolloutExpectation = {}): Promise<ReturnType<typeof titoStats>> {
  // The log tail first: when the CLI failed, the assertion message says why.
  expect({ ...run.result, logTail: run.result.exitCode === 0 ? undefined : run.result.logTail }).toMatchObject({ exitCode: 0, timedOut: false });
  for (const [file, content] of Object.entries(o.files ?? { 'hello.txt': 'hi' })) {
    expect(await readFile(join(run.sandbox.workspaceHostPath, file), 'utf8')).toBe(content);
  }
  if (o.wireFormat) expect(run.records.map((r) => r.wireFormat).filter((w) => w !== o.wireFormat)).toEqual([]);
  expect(run.records.filter((r) => r.finishReason === 'error').map((r) => r.callIndex)).toEqual([]);
  if (o.calls !== undefined) count(run.records.length, o.calls);
  if (o.mainCalls !== undefined) count(run.records.filter((r) => !isSideCall(r.role)).length, o.mainCalls);
  const tito = titoStats(run.records);
  if (o.sideRoles) expect(tito.sideRoles).toEqual(o.sideRoles);
  if (o.wholeReuse ?? true) {
    expect(tito.forkReasons).toEqual([]);
    expect(tito.rate).toBe(1);
  }
  return tito;
}
