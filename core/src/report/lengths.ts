import type { MetricsEvent } from '../contracts/reporter';

/** Sums of the asynchronous loop's length figures over a run's steps (`async/len_{generated,trained}/…`). */
function sums(events: readonly MetricsEvent[], which: 'generated' | 'trained'): Map<string, number> {
  const out = new Map<string, number>();
  const prefix = `async/len_${which}/`;
  for (const e of events) {
    if (e.kind !== 'step') continue;
    for (const [k, v] of Object.entries(e.values)) if (k.startsWith(prefix) && typeof v === 'number') out.set(k.slice(prefix.length), (out.get(k.slice(prefix.length)) ?? 0) + v);
  }
  return out;
}

/**
 * The length distributions (wall seconds) of the rollouts an asynchronous run finished (trained
 * or dropped as stale) and of those it trained: the share of each in every bucket, x being the
 * bucket's upper bound. Empty for a synchronous run (it trains what it generates).
 */
export function lengthSeries(events: readonly MetricsEvent[]): { name: string; points: [number, number][] }[] {
  return (['generated', 'trained'] as const).map((which) => {
    const s = sums(events, which);
    const n = s.get('n') ?? 0;
    const points = [...s].filter(([k]) => k.startsWith('lt_')).map(([k, v]): [number, number] => [Number(k.slice(3).replace('+', '')) * (k.endsWith('+') ? 2 : 1), n ? v / n : 0]).sort((a, b) => a[0] - b[0]);
    return { name: which === 'generated' ? 'finished (trained or dropped)' : 'trained', points };
  });
}

/** The mean length of trained rollouts over that of every finished one, with both means; undefined for a synchronous run. */
export function lengthRatio(events: readonly MetricsEvent[]): string | undefined {
  const g = sums(events, 'generated');
  const t = sums(events, 'trained');
  if (!g.get('n') || !t.get('n')) return undefined;
  const mg = g.get('seconds')! / g.get('n')!;
  const mt = t.get('seconds')! / t.get('n')!;
  return `${(mt / mg).toFixed(3)} (mean ${mt.toFixed(1)} s trained, ${mg.toFixed(1)} s finished; 1.000: no bias against long tasks)`;
}
