import type { ModelCallRecord } from '../contracts/records';

/** TITO statistics of a set of calls: how many later calls reused their parent's ids. */
export function titoStats(records: readonly ModelCallRecord[]) {
  const later = records.filter((r) => r.callIndex > 0);
  const reuse = later.filter((r) => r.origin.kind === 'reuse').length;
  const retry = later.filter((r) => r.origin.kind === 'retry').length;
  const forks = later.filter((r) => r.origin.kind === 'fork');
  return { calls: records.length, later: later.length, reuse, retry, forks: forks.length, rate: later.length ? reuse / later.length : 1, forkReasons: forks.map((r) => ({ callIndex: r.callIndex, rolloutId: r.rolloutId, reason: (r.origin as { reason: string }).reason })) };
}

/** One line: "TITO reuse 100.0% (7/7 calls after the first)". */
export function titoSummary(records: readonly ModelCallRecord[]): string {
  const s = titoStats(records);
  return `${s.calls} calls; TITO reuse ${(100 * s.rate).toFixed(1)}% (${s.reuse}/${s.later} calls after the first${s.retry ? `, ${s.retry} retries` : ''}${s.forks ? `, ${s.forks} forks` : ''})`;
}
