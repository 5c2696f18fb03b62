import { serveReport } from '../../report/report-server';
import { writeReport } from '../../report/report';
import { ClawGymError, ErrorCodes } from '../../errors';
import { untilStopped } from '../interrupt';

export interface ReportCliOptions { out?: string; serve?: boolean; port?: string; inline?: boolean; paged?: boolean }

/**
 * `clawgym report <run> [<run>…]`: write the HTML report (one run, or several overlaid), or with
 * `--serve` serve it on loopback from the run folders until Ctrl-C.
 */
export async function reportCommand(runs: string[], opts: ReportCliOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  if (opts.inline && opts.paged) throw new ClawGymError(ErrorCodes.USAGE, '--inline and --paged cannot both be given', { hint: 'Leave both out to choose by the number of rollouts.' });
  if (!opts.serve) {
    io.out(`${await writeReport(runs, { out: opts.out, cwd: io.cwd, mode: opts.inline ? 'inline' : opts.paged ? 'files' : undefined })}\n`);
    return;
  }
  const port = opts.port === undefined ? 0 : Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ClawGymError(ErrorCodes.USAGE, `--port must be a port number, not ${opts.port}`, { hint: 'Use 0 (the default) to pick a free port.' });
  const server = await serveReport(runs, { port, cwd: io.cwd });
  const stopped = untilStopped(io);
  io.out(`report of ${runs.join(', ')} at ${server.url} (Ctrl-C to stop)\n`);
  await stopped;
  await server.close();
}
