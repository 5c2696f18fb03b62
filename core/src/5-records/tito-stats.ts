import { isSideCall, type CallRole, type ModelCallRecord } from '../contracts/records';

const failedCall = (r: Omit<ModelCallRecord, 'promptIds'>) => r.finishReason === 'error' || r.finishReason === 'aborted';

/**
 * TITO statistics of a set of calls (one rollout or many). Side calls (a role other than main:
 * subagents, compaction, titles, memory extraction) are counted apart and left out of the reuse
 * rate, as the tree's auxiliary filter leaves them out of training; so is each rollout's first
 * main call, which has nothing to extend. A retry (the same messages re-sent, after an answer or
 * after a failed call) reuses its ids verbatim and is neither a reuse nor a fork: the rate is
 * reuses over the calls that extend or fork. A rollout whose calls all failed is `failed`.
 */
export function titoStats(records: readonly Omit<ModelCallRecord, 'promptIds'>[]) {
  const byRollout = new Map<string, Omit<ModelCallRecord, 'promptIds'>[]>();
  for (const r of records) byRollout.set(r.rolloutId, [...(byRollout.get(r.rolloutId) ?? []), r]);
  const later: Omit<ModelCallRecord, 'promptIds'>[] = [];
  const sideRoles: Partial<Record<CallRole, number>> = {};
  let side = 0;
  const failedRollouts: string[] = [];
  for (const [id, rs] of byRollout) {
    const sorted = [...rs].sort((a, b) => a.callIndex - b.callIndex);
    const main = sorted.filter((r) => !isSideCall(r.role));
    // Call 0 of a session has nothing to extend either (a run store may hold several sessions of one id).
    later.push(...main.slice(1).filter((r) => r.callIndex > 0));
    for (const r of sorted) if (isSideCall(r.role)) { side++; sideRoles[r.role!] = (sideRoles[r.role!] ?? 0) + 1; }
    if (sorted.every(failedCall)) failedRollouts.push(id);
  }
  const reuse = later.filter((r) => r.origin.kind === 'reuse').length;
  const retry = later.filter((r) => r.origin.kind === 'retry').length;
  const forks = later.filter((r) => r.origin.kind === 'fork');
  const extending = reuse + forks.length;
  return {
    calls: records.length,
    /** Main calls after each rollout's first. */
    later: later.length,
    reuse, retry, forks: forks.length,
    /** Reuses over the later main calls that extend or fork (retries and side calls excluded); 1 when there are none. */
    rate: extending ? reuse / extending : 1,
    side, sideRoles,
    failed: records.filter(failedCall).length,
    failedRollouts,
    forkReasons: forks.map((r) => ({ callIndex: r.callIndex, rolloutId: r.rolloutId, reason: (r.origin as { reason: string }).reason })),
  };
}

/** One line: "4 calls; TITO reuse 100.0% (3/3 main calls after the first; 1 side call excluded: title)". */
export function titoSummary(records: readonly Omit<ModelCallRecord, 'promptIds'>[]): string {
  const s = titoStats(records);
  const extending = s.reuse + s.forks;
  const parts = [`${s.reuse}/${extending} main calls after the first`];
  if (s.retry) parts.push(`${s.retry} ${s.retry === 1 ? 'retry' : 'retries'}`);
  if (s.forks) parts.push(`${s.forks} ${s.forks === 1 ? 'fork' : 'forks'}`);
  if (s.failed) parts.push(`${s.failed} failed`);
  if (s.side) parts.push(`${s.side} side ${s.side === 1 ? 'call' : 'calls'} excluded: ${Object.entries(s.sideRoles).map(([k, n]) => `${k}${n! > 1 ? ` ×${n}` : ''}`).join(', ')}`);
  const rate = s.calls === 0 ? 'no calls' : s.failedRollouts.length === new Set(records.map((r) => r.rolloutId)).size ? 'n/a (every call failed)' : `${(100 * s.rate).toFixed(1)}%`;
  return `${s.calls} calls; TITO reuse ${rate} (${parts.join('; ')})${s.failedRollouts.length ? `; failed: ${s.failedRollouts.join(', ')}` : ''}`;
}
