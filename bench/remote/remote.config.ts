import local from './local.config';

/**
 * bench:remote's remote run: the same, but trained by `clawgym trainer serve` over HTTP (the
 * Tinker API) against a service as strict as SkyRL's FSDP server; the engine here loads the
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
      // The service behaves as SkyRL's FSDP backend: optim_step applies the learning rate only
      // (betas, eps, weight decay and clipping are the server's), so only lr and its warm-up are ours.
      backend: 'skyrl-fsdp',
      optimizer: { lr: engine.options.optimizer.lr, warmupSteps: 10 },
    },
  },
};
