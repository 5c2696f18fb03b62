import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MetricsEvent } from '../contracts/reporter';

/** Where a run's metrics log lies: one JSON event a line, appended as the run goes. */
export const metricsFile = (runDir: string) => join(runDir, 'metrics.jsonl');

/** A run's metrics events, in order; none when there is no log. A line a kill cut short is skipped. */
export async function readMetrics(runDir: string): Promise<MetricsEvent[]> {
  const text = await readFile(metricsFile(runDir), 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l.trim()).flatMap((l) => {
    try { return [JSON.parse(l) as MetricsEvent]; } catch { return []; }
  });
}
