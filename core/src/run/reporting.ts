import type { MetricsEvent, ReportedRun, Reporter } from '../contracts/reporter';
import { ClawGymError, ErrorCodes, messageOf } from '../errors';
import type { Logger } from '../contracts/plugin';

/**
 * The run's reporters at work: every metrics event goes to each, in order (the metrics file
 * first), and is awaited before the run goes on; at the end each renders. A reporter that fails
 * on an event fails the run with its name; one that fails to render is a warning, since the run
 * itself is done.
 */
export class Reporting {
  constructor(private readonly reporters: readonly Reporter[], private readonly run: ReportedRun, private readonly log?: Logger) {}

  async emit(event: MetricsEvent): Promise<void> {
    for (const r of this.reporters) {
      if (!r.onMetrics) continue;
      try {
        await r.onMetrics(event, this.run);
      } catch (err) {
        throw new ClawGymError(ErrorCodes.REPORTER_FAILED, `reporter "${r.name}" failed on the ${event.kind} event of step ${event.step}: ${messageOf(err)}`, { cause: err, hint: 'Fix the reporter or remove it from "reporters" in clawgym.config.ts.' });
      }
    }
  }

  /** Render every reporter that renders; returns the files written, by reporter. */
  async render(): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const r of this.reporters) {
      if (!r.render) continue;
      try {
        files[r.name] = await r.render(this.run.runDir);
      } catch (err) {
        this.log?.warn(`reporter "${r.name}" could not render ${this.run.runDir}: ${messageOf(err)}`);
      }
    }
    return files;
  }
}
