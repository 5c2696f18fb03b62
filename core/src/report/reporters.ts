import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Reporter } from '../contracts/reporter';
import { metricsFile } from './metrics-log';
import { writeReport } from './report';

/**
 * The metrics file as a reporter: every event one JSON line in `<runDir>/metrics.jsonl`.
 * Always the run's first reporter (resume and the HTML report read the file), not a slot.
 */
export const metricsJsonlReporter: Reporter = {
  name: 'metrics-jsonl',
  async onMetrics(event, run) {
    const file = metricsFile(run.runDir);
    await mkdir(dirname(file), { recursive: true });
    await appendFile(file, `${JSON.stringify(event)}\n`);
  },
};

/** `report.html` beside the metrics, rendered at the end of a run (`clawgym report` renders it on demand). */
export const htmlReporter: Reporter = {
  name: 'html',
  render: (runDir) => writeReport(runDir),
};
