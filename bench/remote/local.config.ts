import { join } from 'node:path';
import base from '../../clawgym.config';

/**
 * bench:remote's in-process run: the default config (its engine, trainer, tasks, algorithm and
 * schedule), shortened to BENCH_REMOTE_STEPS steps and BENCH_REMOTE_EVAL held-out tasks. Paths
 * are the repository's: this file is not in its root.
 */
const repo = join(__dirname, '..', '..');
const engine = base.engine as { use: string; options: Record<string, unknown> };
export default {
  ...base,
  name: 'bench-remote-local',
  engine: { ...engine, options: { ...engine.options, checkpoint: 'cold-start' } },
  run: { ...base.run, outDir: process.env.BENCH_REMOTE_OUT ?? join(repo, 'runs'), steps: Number(process.env.BENCH_REMOTE_STEPS ?? 10), evalTasks: Number(process.env.BENCH_REMOTE_EVAL ?? 150) },
};
