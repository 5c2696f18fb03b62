import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { loadConfig } from '../../config/load';
import { provider, slotOptions, trainerOptions } from '../../kernel/create';
import { createKernel } from '../../run/create-kernel';
import { TRAINER_BACKENDS, type TrainerBackend } from '../../tinker/backends';
import { TinkerServer } from '../../tinker/server';
import { untilStopped } from '../interrupt';
import { scriptedSlot } from './engine-serve';

export interface TrainerServeOptions { config?: string; host?: string; port?: string; data?: string; noEngine?: boolean; backend?: string; multiTenant?: boolean; sampleBaseModel?: boolean; tokenizer?: string; baseModel?: string }

/**
 * `clawgym trainer serve`: the config's trainer (the embedded one) behind the Tinker API, in a
 * process of its own, so `trainer: { use: 'tinker' }` (and `engine: { use: 'tinker' }`) run the
 * remote path here as they would against SkyRL's server. Stops on SIGINT/SIGTERM (or `signal`).
 */
export async function trainerServe(opts: TrainerServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const loaded = loadConfig({ cwd: io.cwd, configFile: opts.config });
  // --tokenizer: the unigram policy over that model's vocabulary, sampled by the scripted engine in its tokens.
  const config = opts.tokenizer === undefined ? loaded : {
    ...loaded,
    engine: scriptedSlot({ tokenizer: opts.tokenizer }, io.cwd),
    trainer: { use: 'unigram', options: { tokenizer: resolve(io.cwd, opts.tokenizer) } },
  };
  const kernel = await createKernel(config);
  const dataDir = resolve(io.cwd, opts.data ?? resolve(config.rootDir, config.run.outDir, 'trainer-serve'));
  // The engine and trainer share one run folder, so the embedded ones share their weights.
  const ctx = { runDir: dataDir, seed: config.run.seed, rootDir: config.rootDir };
  const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), ctx);
  const trainer = await (await provider(kernel, 'trainer', config.trainer)).create(trainerOptions(config), ctx);
  const backend = (opts.backend ?? 'skyrl-fsdp') as TrainerBackend;
  const baseModel = opts.baseModel ?? 'embedded';
  const server = new TinkerServer({ trainer, engine, dataDir, baseModel, host: opts.host ?? '127.0.0.1', port: Number(opts.port ?? 8000), backend, multiTenant: opts.multiTenant, sampleBaseModel: opts.sampleBaseModel });
  const url = await server.start();
  const t = server.traits;
  const stopped = untilStopped(io);
  io.out(`ClawGym trainer service (Tinker API) on ${url} (trainer: ${trainer.name}, engine: ${engine.name}, base model: ${baseModel})\ncheckpoints: ${dataDir}\n` +
    `behaves as ${backend}: loss ${t.reduction}, optim_step applies ${t.optimizer === 'lr-only' ? 'the learning rate only' : 'every Adam field'}, ${t.tenancy === 'one' ? 'one model at a time' : 'several models'}, base-model sampling ${t.samplesBaseModel ? 'on' : 'refused'}\n` +
    `config: trainer: { use: 'tinker', options: { baseUrl: '${url}', backend: '${backend}', loraRank: 0, checkpointsDir: '${dataDir}' } }\nPress Ctrl-C to stop.\n`);
  await stopped;
  await server.stop();
  await engine.close?.();
  await kernel.dispose();
  io.out('stopped.\n');
}

/** `clawgym trainer …` commands. */
export function trainerCommands(program: Command, io: { out: (s: string) => void; err: (s: string) => void; cwd: string; signal?: AbortSignal }, configOption: () => Option): void {
  const out = { writeOut: io.out, writeErr: io.err };
  const trainer = program.command('trainer').description('the trainer as a service (the Tinker API)').exitOverride().configureOutput(out);
  trainer.command('serve')
    .description('serve the config\'s trainer (the embedded one) over the Tinker API, as SkyRL\'s server does on GPUs')
    .addOption(configOption())
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', '8000')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data <dir>', 'checkpoint folder (default: <run.outDir>/trainer-serve)')
    .addOption(new Option('--backend <backend>', 'whose behaviour to reproduce: loss reduction, optimizer fields applied, tenancy, base-model sampling').choices([...TRAINER_BACKENDS]).default('skyrl-fsdp'))
    .option('--multi-tenant', 'kinder than SkyRL FSDP: a second create_model retires the loaded model instead of failing')
    .option('--tokenizer <folder>', 'train a unigram policy (one logit per token id) over this Hugging Face model\'s vocabulary instead of the config\'s trainer: it takes the datums of a real model\'s rollouts (pair with `engine serve --tokenizer`)')
    .option('--base-model <name>', 'the base model name it answers to (get_server_capabilities)', 'embedded')
    .option('--sample-base-model', 'kinder than SkyRL FSDP: asample of the base model before any sampler checkpoint')
    .addHelpText('after', `
Routes (JSON, as SkyRL's skyrl/tinker/api.py): /api/v1/healthz, create_session, session_heartbeat,
create_model, unload_model, forward, forward_backward (cross_entropy, importance_sampling, ppo),
optim_step, save_weights, load_weights, save_weights_for_sampler, asample, retrieve_future,
training_runs (listing, checkpoints, a sampler checkpoint's archive).

As strict as SkyRL's FSDP backend by default: one model at a time (unload_model frees it), no
sampling before the first save_weights_for_sampler, optim_step applies the learning rate only,
checkpoints are tar archives named <name>.tar.gz, metrics named skyrl.ai/grad_norm etc.

With --tokenizer, the trainer is a unigram policy over that model's vocabulary: tiny, so prompts of
tens of thousands of tokens train on a CPU, with the losses and refusals above (a token id outside
the vocabulary, datums whose lengths disagree). Its sampler checkpoints are the folders
\`engine serve --tokenizer\` loads.

Example:
  clawgym trainer serve --port 8000 &
  # clawgym.config.ts of the run:
  #   trainer: { use: 'tinker', options: { baseUrl: 'http://127.0.0.1:8000', backend: 'skyrl-fsdp', loraRank: 0, checkpointsDir: 'runs/trainer-serve' } }
  #   (the embedded trainer trains all weights: loraRank 0 says so; checkpointsDir lets engine 'embedded' load them)`)
    .exitOverride().configureOutput(out)
    .action(async (opts: TrainerServeOptions) => trainerServe(opts, io));
}
