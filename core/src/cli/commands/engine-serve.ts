import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../../config/load';
import { ClawGymError, ErrorCodes, messageOf } from '../../errors';
import { provider, slotName, slotOptions } from '../../kernel/create';
import { createKernel } from '../../run/create-kernel';
import { serveEngine } from '../../engine/serve/engine-server';
import { untilStopped } from '../interrupt';

export interface EngineServeOptions {
  config?: string;
  host?: string;
  port?: string;
  servedModelName?: string;
  sglang?: '0025436e' | 'modes';
  vllmDiskTransfer?: boolean;
  vllmWeightInfo?: boolean;
  tokenizer?: string;
  replies?: string;
  contextLength?: string;
}

/** The engine slot `--tokenizer` serves instead of the config's: the scripted engine in that model's tokens. */
export function scriptedSlot(opts: { tokenizer: string; replies?: string; contextLength?: string }, cwd: string) {
  const contextLength = Number(opts.contextLength ?? 65536);
  if (!Number.isInteger(contextLength) || contextLength <= 0) throw new ClawGymError(ErrorCodes.USAGE, `--context-length must be a positive number of tokens, not "${opts.contextLength}"`);
  let replies: unknown;
  if (opts.replies !== undefined) {
    try { replies = JSON.parse(readFileSync(resolve(cwd, opts.replies), 'utf8')); } catch (e) {
      throw new ClawGymError(ErrorCodes.USAGE, `--replies ${opts.replies}: ${messageOf(e)}`, { hint: 'Give a JSON file holding an array of turns, e.g. [{"text": "Done."}].' });
    }
  }
  return { use: 'scripted', options: { tokenizer: resolve(cwd, opts.tokenizer), contextLength, ...(replies === undefined ? {} : { replies }) } };
}

/**
 * `clawgym engine serve`: the config's in-process engine (the embedded model) behind vLLM's and
 * SGLang's HTTP protocols, weight-update routes included, so `engine: 'vllm' | 'sglang'` in
 * another process drives it as it would a real server. Prints the URL, then serves until
 * SIGINT/SIGTERM (or `signal`).
 */
export async function engineServe(opts: EngineServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const loaded = loadConfig({ cwd: io.cwd, configFile: opts.config });
  const config = opts.tokenizer === undefined ? loaded : { ...loaded, engine: scriptedSlot({ ...opts, tokenizer: opts.tokenizer }, io.cwd) };
  const kind = slotName(config.engine);
  if (kind === 'vllm' || kind === 'sglang') {
    throw new ClawGymError(ErrorCodes.USAGE, `engine serve serves an in-process engine, but the config's engine is "${kind}" (a client of a server)`, { hint: 'Point it at a config whose engine is the embedded model (e.g. the default clawgym.config.ts).' });
  }
  const port = opts.port === undefined ? 0 : Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ClawGymError(ErrorCodes.USAGE, `--port must be a port number (0 picks a free one), not "${opts.port}"`);
  const kernel = await createKernel(config);
  const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), {
    // A policy of its own: this process serves; the trainer's weights arrive through the update routes.
    runDir: resolve(config.rootDir, config.run.outDir, `engine-serve-${process.pid}`), seed: config.run.seed, rootDir: config.rootDir,
  });
  const server = await serveEngine(engine, { host: opts.host, port, servedModelName: opts.servedModelName, sglang: opts.sglang, vllmDiskTransfer: opts.vllmDiskTransfer, vllmWeightInfo: opts.vllmWeightInfo });
  const stopped = untilStopped(io);
  io.out(`engine ${engine.name} (weights version ${engine.policyVersion()}) listening on ${server.url}\n` +
    `  vLLM:   POST ${server.url}/v1/completions (token-id prompts)${opts.vllmDiskTransfer ? ', disk weight transfer /pause … /finish_weight_update (unreleased PR #52152)' : ' (as released vLLM: no route loads full weights from a folder)'}\n` +
    `  SGLang (${opts.sglang === 'modes' ? 'with pause modes' : 'as at 0025436e: pause_generation aborts every request in flight'}): POST ${server.url}/generate, /pause_generation, /update_weights_from_disk, /continue_generation\n`);
  await stopped;
  await server.close();
  await engine.close?.();
  await kernel.dispose();
}
