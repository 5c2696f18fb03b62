import type { RolloutReport } from '../../6-rollout/runner';

/** Upper bounds (seconds) of the rollout length buckets: doubling, the last open. */
export const LENGTH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128] as const;

/** The bucket label of a length in seconds: its upper bound, or `128+`. */
export function lengthBucket(seconds: number): string {
  for (const b of LENGTH_BUCKETS) if (seconds < b) return String(b);
  return `${LENGTH_BUCKETS[LENGTH_BUCKETS.length - 1]}+`;
}

/**
 * The lengths (wall seconds) of the rollouts a step saw finish (`generated`: trained or dropped
 * as stale) and of those it trained, as sums, counts and histograms under `async/len_…`: the
 * report compares their distributions, and a policy that favours short tasks trains a shorter
 * mean than it generates. Infrastructure failures are left out of both.
 */
export function lengthValues(generated: readonly RolloutReport[], trained: readonly RolloutReport[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, reports] of [['generated', generated], ['trained', trained]] as const) {
    const scored = reports.filter((r) => r.outcome !== 'infra-error');
    out[`async/len_${name}/n`] = scored.length;
    out[`async/len_${name}/seconds`] = scored.reduce((n, r) => n + r.durationMs / 1000, 0);
    for (const r of scored) {
      const k = `async/len_${name}/lt_${lengthBucket(r.durationMs / 1000)}`;
      out[k] = (out[k] ?? 0) + 1;
    }
  }
  return out;
}
