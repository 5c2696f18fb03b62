import { Option, type Command } from 'commander';
import { requireInstalled } from '../../kernel/installed';

export interface TrainerServeOptions { config?: string; host?: string; port?: string; data?: string; noEngine?: boolean; backend?: string; multiTenant?: boolean; sampleBaseModel?: boolean; apiKey?: string; jwtAuth?: boolean; tokenizer?: string; replies?: string; baseModel?: string; as?: string }

/**
 * `clawgym trainer serve`: the config's trainer (the embedded one) behind the Tinker API, in a
 * process of its own, so `trainer: { use: 'tinker' }` (and `engine: { use: 'tinker' }`) run the
 * remote path here as they would against SkyRL's server. The stand-in ships in `@clawgym/standins`
 * (with the other stand-ins), resolved from the project as plugins are: core runs without it.
 */
export async function trainerServe(opts: TrainerServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const served = requireInstalled<{ trainerServe: typeof trainerServe }>('@clawgym/standins', io.cwd, 'clawgym trainer serve');
  await served.trainerServe(opts, io);
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
    .addOption(new Option('--backend <backend>', 'whose behaviour to reproduce: loss reduction, optimizer fields applied, tenancy, base-model sampling').choices(['skyrl-fsdp', 'skyrl-megatron', 'skyrl-jax', 'tinker']).default('skyrl-fsdp'))
    .option('--multi-tenant', 'kinder than SkyRL FSDP: a second create_model retires the loaded model instead of failing')
    .option('--tokenizer <folder>', 'train a unigram policy (one logit per token id) over this Hugging Face model\'s vocabulary instead of the config\'s trainer: it takes the datums of a real model\'s rollouts (pair with `engine serve --tokenizer`)')
    .option('--replies <file>', 'with --tokenizer: what its sampler (asample) answers, a JSON array of scripted turns ({text, thinking, toolCalls: [{name, arguments}]}) as `engine serve --replies` takes; turn N of a conversation gets reply N, the last repeats (default: one line of text)')
    .option('--base-model <name>', 'the base model name it answers to (get_server_capabilities)', 'embedded')
    .option('--sample-base-model', 'kinder than SkyRL FSDP: asample of the base model before any sampler checkpoint')
    .option('--api-key <key>', 'require this key in X-API-Key, as hosted Tinker does (default: $CLAWGYM_TRAINER_API_KEY; none: any request, as SkyRL)')
    .addOption(new Option('--as <release>', 'reproduce a SkyRL release: its routes (others answer 404), its request models (fields they lack are dropped, as pydantic does: skyrl@0.3.0 has no seq_id, so a retried step runs twice) and its /openapi.json').choices(['skyrl@main', 'skyrl@0.3.0']))
    .option('--jwt-auth', 'as hosted Tinker with pjwt_auth_enabled: clients exchange the key at /api/v1/auth/token and send the JWT; the key itself is refused elsewhere')
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
