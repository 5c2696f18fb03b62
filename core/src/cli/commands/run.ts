import { loadConfig } from '../../config/load';
import { train } from '../../run/train';
import { preflight } from '../../doctor/preflight';
import { lockFileOf, readLock } from '../../run/lock/file';
import { wholeNumberFlag } from '../flags';
import { onInterrupt } from '../interrupt';
import { LiveDisplay, type LiveStream } from '../live';

/** `clawgym run`: train as the config says; Ctrl-C stops cleanly at the current step. */
export async function runCommand(opts: { config?: string; resume?: boolean; name?: string; steps?: string; frozen?: boolean }, io: { out: (s: string) => void; err: (s: string) => void; cwd: string; stdout?: LiveStream }): Promise<void> {
  let config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  // --steps: the run's length in all; with --resume it extends a run that finished.
  if (opts.steps !== undefined) config = { ...config, run: { ...config.run, steps: wholeNumberFlag('--steps', opts.steps, 1) } };
  await preflight(config, 'run');
  // --frozen: the lock beside the config, which the run must match.
  const file = lockFileOf(config);
  const frozen = opts.frozen ? { lock: await readLock(file, 'the config', 'Write it with `clawgym lock` (and commit it), then run with --frozen.'), file } : undefined;
  const controller = new AbortController();
  // On a terminal one status line (step, rollouts, reward, Pass@1, tok/s, ETA) stays under the log.
  const display = new LiveDisplay(io.stdout?.isTTY ? io.stdout : { write: io.out });
  const removeHandlers = onInterrupt(controller, (s) => { display.close(); io.err(s); });
  try {
    const { runDir, steps } = await train({
      config, name: opts.name, resume: opts.resume, signal: controller.signal, frozen,
      onEvent: (_e, text) => display.log(`${new Date().toISOString().slice(11, 19)}  ${text}`),
      onProgress: (p) => display.update(p),
    });
    display.close();
    io.out(`${controller.signal.aborted ? 'stopped' : 'finished'} after step ${steps}: ${runDir}\n  report: ${runDir}/report.html\n  metrics: ${runDir}/metrics.jsonl\n  continue with: clawgym run --resume${opts.config ? ` --config ${opts.config}` : ''}${opts.name ? ` --name ${opts.name}` : ''}${opts.steps ? ` --steps ${opts.steps}` : ''}\n`);
  } finally {
    display.close();
    removeHandlers();
  }
}
