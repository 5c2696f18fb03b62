import local from './local.config';

/**
 * bench:remote's remote run: the same, but trained by `clawgym trainer serve` over HTTP (the
 * Tinker API) with the embedded trainer's own optimiser settings; the engine here loads the
 * weights the service publishes after each step (BENCH_REMOTE_URL, BENCH_REMOTE_DATA).
 */
const engine = local.engine as { options: { optimizer: { lr: number } } };
export default {
  ...local,
  name: 'bench-remote-remote',
  trainer: {
    use: 'tinker',
    options: {
      baseUrl: process.env.BENCH_REMOTE_URL ?? 'http://127.0.0.1:8000',
      checkpointsDir: process.env.BENCH_REMOTE_DATA,
      loraRank: 0,
      // The embedded trainer's defaults, with the default config's lr.
      optimizer: { lr: engine.options.optimizer.lr, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, gradClip: 1, warmupSteps: 10 },
    },
  },
};
