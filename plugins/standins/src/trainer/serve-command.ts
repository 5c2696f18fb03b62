import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AdamOptions, ClawGymError, ErrorCodes, createKernel, loadConfig, messageOf, provider, repliesByTurn, slotOptions, trainerOptions, untilStopped, z, type Engine, type ScriptedTurn, type Trainer, type TrainerServeOptions } from '@clawgym/core';
import { loadChatModel } from '@clawgym/model-hf';
import { TRAINER_BACKENDS, type TrainerBackend } from '@clawgym/engine-tinker';
import { UnigramScriptedEngine } from '../unigram/unigram-engine';
import { UnigramTrainer } from '../unigram/unigram-trainer';
import { TinkerServer } from './server';
import { STAND_IN_RELEASES, type StandInRelease } from './server-release';

/**
 * `clawgym trainer serve`: the config's trainer (the embedded one) behind the Tinker API, in a
 * process of its own, so `trainer: { use: 'tinker' }` (and `engine: { use: 'tinker' }`) run the
 * remote path here as they would against SkyRL's server. Stops on SIGINT/SIGTERM (or `signal`).
 */
export async function trainerServe(opts: TrainerServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const config = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const kernel = await createKernel(config);
  const dataDir = resolve(io.cwd, opts.data ?? resolve(config.rootDir, config.run.outDir, 'trainer-serve'));
  if (opts.replies !== undefined && opts.tokenizer === undefined) throw new ClawGymError(ErrorCodes.USAGE, '--replies needs --tokenizer: the scripted replies are rendered in that model\'s tokens', { hint: 'Add --tokenizer <model folder> (its tokenizer.json and chat template), or leave --replies out: without --tokenizer the config\'s own engine samples.' });
  const { engine, trainer }: { engine: Engine; trainer: Trainer } = opts.tokenizer !== undefined ? unigramStandin(resolve(io.cwd, opts.tokenizer), opts.replies === undefined ? undefined : resolve(io.cwd, opts.replies)) : await configPair(kernel, config, dataDir);
  const baseModel = opts.baseModel ?? 'embedded';
  const backend = (opts.backend ?? 'skyrl-fsdp') as TrainerBackend;
  if (!TRAINER_BACKENDS.includes(backend)) {
    throw new ClawGymError(ErrorCodes.USAGE, `--backend must be one of ${TRAINER_BACKENDS.join(', ')}, not "${opts.backend}"`);
  }
  const release = opts.as as StandInRelease | undefined;
  if (release !== undefined && !(release in STAND_IN_RELEASES)) {
    throw new ClawGymError(ErrorCodes.USAGE, `--as must be one of ${Object.keys(STAND_IN_RELEASES).join(', ')}, not "${opts.as}"`);
  }
  const apiKey = opts.apiKey ?? process.env.CLAWGYM_TRAINER_API_KEY;
  if (opts.jwtAuth && !apiKey) throw new ClawGymError(ErrorCodes.CONFIG_INVALID, 'trainer serve --jwt-auth needs an API key to exchange', { hint: 'Pass --api-key <key> (or set CLAWGYM_TRAINER_API_KEY); clients send it as trainer.options.apiKey.' });
  const auth = { ...(apiKey ? { apiKey } : {}), jwt: opts.jwtAuth === true };
  const server = new TinkerServer({ trainer, engine, dataDir, baseModel, host: opts.host ?? '127.0.0.1', port: Number(opts.port ?? 8000), backend, multiTenant: opts.multiTenant, sampleBaseModel: opts.sampleBaseModel, auth, release });
  const url = await server.start();
  const t = server.traits;
  const stopped = untilStopped(io);
  io.out(`ClawGym trainer service (Tinker API) on ${url} (trainer: ${trainer.name}, engine: ${engine.name}, base model: ${baseModel})\ncheckpoints: ${dataDir}\n` +
    `behaves as ${backend}${release ? ` of SkyRL ${release.slice('skyrl@'.length)} (${server.release.contract['x-commit'].slice(0, 9)})` : ''}: loss ${t.reduction}, optim_step applies ${t.optimizer === 'lr-only' ? 'the learning rate only' : 'every Adam field'}, ${t.tenancy === 'one' ? 'one model at a time' : 'several models'}, base-model sampling ${t.samplesBaseModel ? 'on' : 'refused'}, ${auth.jwt ? 'API key exchanged for JWTs (auth/token)' : apiKey ? 'API key required' : 'no key'}\n` +
    `config: trainer: { use: 'tinker', options: { baseUrl: '${url}', backend: '${backend}', loraRank: 0, checkpointsDir: '${dataDir}' } }\nPress Ctrl-C to stop.\n`);
  await stopped;
  await server.stop();
  await engine.close?.();
  await kernel.dispose();
  io.out('stopped.\n');
}

/** The config's engine and trainer (the embedded pair: one run folder, so they share their weights). */
async function configPair(kernel: Awaited<ReturnType<typeof createKernel>>, config: ReturnType<typeof loadConfig>, dataDir: string) {
  const ctx = { runDir: dataDir, seed: config.run.seed, rootDir: config.rootDir };
  const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), ctx);
  const trainer = await (await provider(kernel, 'trainer', config.trainer)).create(trainerOptions(config), ctx);
  return { engine, trainer };
}

const Turns = z.array(z.strictObject({
  text: z.string().optional(),
  thinking: z.string().optional(),
  toolCalls: z.array(z.strictObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()) })).optional(),
})).min(1);

/** `--replies <file>`: the scripted turns `asample` answers (as `engine serve --replies` reads them). */
function readReplies(file: string): ScriptedTurn[] {
  let raw: unknown;
  try { raw = JSON.parse(readFileSync(file, 'utf8')); } catch (e) {
    throw new ClawGymError(ErrorCodes.USAGE, `--replies ${file}: ${messageOf(e)}`, { hint: 'Give a JSON file holding an array of turns, e.g. [{"text": "Done."}].' });
  }
  const parsed = Turns.safeParse(raw);
  if (!parsed.success) throw new ClawGymError(ErrorCodes.USAGE, `--replies ${file} is not an array of turns: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, { hint: 'Each turn is {text?, thinking?, toolCalls?: [{name, arguments}]}.' });
  return parsed.data;
}

/**
 * `--tokenizer`: a unigram policy over that Hugging Face model's vocabulary (the
 * UnigramTrainer), sampled by the scripted engine in the model's tokens for `asample` (the turns
 * of `--replies`, else one line): a trainer that takes a real model's datums, prompts of tens of
 * thousands of tokens, on a CPU.
 */
function unigramStandin(folder: string, replies?: string) {
  const turns = replies === undefined ? [{ text: 'Hello from the ClawGym scripted engine.' }] : readReplies(replies);
  const model = loadChatModel(folder);
  const engine = new UnigramScriptedEngine(repliesByTurn(turns), model);
  return { engine, trainer: new UnigramTrainer(model.tokenizer.vocabSize, AdamOptions.parse({})) };
}
