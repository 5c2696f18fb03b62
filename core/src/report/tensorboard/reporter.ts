import { appendFile, mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { MetricsEvent, Reporter } from '../../contracts/reporter';
import { encodeFileVersion, encodeScalars } from './event';
import { tfRecord } from './record';

/** The folder of a run's TensorBoard event files: `tensorboard --logdir <runDir>/tensorboard`. */
export const tensorboardDir = (runDir: string) => join(runDir, 'tensorboard');

/** The numeric values of an event as TensorBoard tags: step metrics as named, held-out ones under `eval/`. */
function scalarsOf(event: MetricsEvent): Record<string, number> {
  const prefix = event.kind === 'step' ? '' : `${event.kind}/`;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(event.values)) if (typeof v === 'number' && Number.isFinite(v)) out[`${prefix}${k}`] = v;
  return out;
}

/**
 * Scalars of every metrics event in a TensorBoard event file under `<runDir>/tensorboard/`.
 * One file per process and run (a resumed run adds a file; TensorBoard reads them as one run).
 */
export function tensorboardReporter(): Reporter {
  const files = new Map<string, Promise<string>>();
  // Appends are chained so records never interleave, whatever the caller awaits.
  let tail: Promise<void> = Promise.resolve();
  const fileOf = (runDir: string) => {
    let file = files.get(runDir);
    if (!file) {
      const dir = tensorboardDir(runDir);
      const path = join(dir, `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${hostname()}.${process.pid}`);
      file = mkdir(dir, { recursive: true }).then(async () => {
        await appendFile(path, tfRecord(encodeFileVersion(Date.now() / 1000)));
        return path;
      });
      files.set(runDir, file);
    }
    return file;
  };
  return {
    name: 'tensorboard',
    onMetrics(event, run) {
      const scalars = scalarsOf(event);
      if (Object.keys(scalars).length === 0) return;
      const done = tail.then(async () => appendFile(await fileOf(run.runDir), tfRecord(encodeScalars(event.time / 1000, event.step, scalars))));
      tail = done.catch(() => undefined);
      return done;
    },
    async render(runDir) {
      await tail;
      return (await files.get(runDir)) ?? tensorboardDir(runDir);
    },
  };
}
