import { join } from 'node:path';
import { byteChatMl, defineConfig, definePlugin, z } from '@clawgym/core';
import { createTokenIdEngine } from '@clawgym/engine-vllm';
import { CompactTemplate } from '@clawgym/engine-embedded';
import base from '../../clawgym.config';

// This file's folder is the run's root: paths of the default config are the repository's.
const repo = join(__dirname, '..', '..');

/**
 * bench:async's run: the default config (its cold-start checkpoint, model, tasks, GRPO) with the
 * embedded engine served by two `clawgym engine serve` replicas (SGLang protocol, weights synced
 * from disk after every step), agentloop tools that wait a random 0.2–2 s as tools waiting on
 * networks and builds do, and the synchronous or the asynchronous loop. bench/async/index.js sets
 * the environment: BENCH_ASYNC_REPLICAS (comma-separated URLs), BENCH_ASYNC_STALENESS (unset:
 * synchronous), BENCH_ASYNC_POLICY (`fair`, else `freshest`), BENCH_ASYNC_STEPS, BENCH_ASYNC_EVAL_TASKS.
 */
const replicas = (process.env.BENCH_ASYNC_REPLICAS ?? 'http://127.0.0.1:8000').split(',');
const staleness = process.env.BENCH_ASYNC_STALENESS;
const engine = base.engine as { use: string; options: Record<string, unknown> };
const model = engine.options.model as { context: number };

/**
 * The SGLang client with the embedded model's own chat template (the compact one its cold start
 * was trained with): core's `sglang` engine renders ChatML with JSON tool schemas, far longer
 * than this model's context.
 */
const remoteEmbedded = definePlugin({
  name: 'bench:remote-embedded',
  options: z.strictObject({}),
  apply(api) {
    api.provide.engine({
      name: 'remote-embedded',
      async create() {
        const { tokenizer } = byteChatMl();
        return createTokenIdEngine({ flavor: 'sglang', replicas, model: 'embedded', contextLength: model.context, tokenizer, chatTemplate: new CompactTemplate(tokenizer, { systemChars: 0, toolResultChars: 1500 }) });
      },
    });
  },
});

export default defineConfig({
  ...base,
  plugins: [remoteEmbedded()],
  engine: 'remote-embedded',
  // The default config's checkpoint is a name the embedded package ships (`cold-start`): it
  // resolves from this folder too, where no folder of that name is.
  trainer: { use: 'embedded', options: engine.options },
  harnesses: [{ use: 'agentloop', options: { toolLatencyMs: [200, 2000] } }],
  // BENCH_ASYNC_MIXED=1: half the tasks with a 3 s verifier (vocab-upper-slow), of equal
  // difficulty: long and short rollouts, for the policies' length bias.
  ...(process.env.BENCH_ASYNC_MIXED ? { tasks: [{ use: 'builtin', options: { families: ['vocab-upper', 'vocab-upper-slow'] } }] } : {}),
  reporters: [],
  run: {
    ...base.run,
    steps: Number(process.env.BENCH_ASYNC_STEPS ?? 30),
    evalTasks: Number(process.env.BENCH_ASYNC_EVAL_TASKS ?? 400),
    outDir: join(repo, 'runs'),
    concurrency: 16,
    evalEvery: 0,
    ...(staleness === undefined ? {} : { async: { maxStaleness: Number(staleness), policy: process.env.BENCH_ASYNC_POLICY === 'fair' ? 'fair' as const : 'freshest' as const } }),
  },
});
