import type { ModelCallRecord } from '../contracts/records';

/** Template drift of a set of calls: how many were clean, realigned (raw ids kept) or forks, and why. */
export function driftStats(records: readonly Omit<ModelCallRecord, 'promptIds'>[]) {
  const counts = { clean: 0, realigned: 0, fork: 0, unrecorded: 0 };
  const reasons = new Map<string, number>();
  for (const r of records) {
    if (!r.drift) { counts.unrecorded++; continue; }
    counts[r.drift.class]++;
    if (r.drift.class !== 'clean') {
      const why = r.drift.reason.replace(/^extends call \d+: /, '').replace(/\d+/g, 'N');
      reasons.set(why, (reasons.get(why) ?? 0) + 1);
    }
  }
  return { ...counts, reasons: [...reasons].map(([reason, calls]) => ({ reason, calls })).sort((a, b) => b.calls - a.calls) };
}

/** One line: "drift: 7 clean, 1 realigned, 0 fork". */
export function driftSummary(records: readonly Omit<ModelCallRecord, 'promptIds'>[]): string {
  const d = driftStats(records);
  return `drift: ${d.clean} clean, ${d.realigned} realigned, ${d.fork} fork${d.unrecorded ? ` (${d.unrecorded} calls recorded before drift was)` : ''}`;
}
