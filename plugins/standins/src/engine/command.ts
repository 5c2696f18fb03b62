import { resolve } from 'node:path';
import { ClawGymError, ErrorCodes, createKernel, loadConfig, provider, slotName, slotOptions, untilStopped, type Engine, type EngineServeOptions } from '@clawgym/core';
import { releaseOf, serveEngine } from './engine-server';
import { ENGINE_RELEASES, type EngineReleaseName } from './releases';
import { scriptedStandin } from './scripted-standin';

/**
 * `clawgym engine serve`: the config's in-process engine (the embedded model) behind vLLM's and
 * SGLang's HTTP protocols, weight-update routes included, so `engine: 'vllm' | 'sglang'` in
 * another process drives it as it would a real server. Prints the URL, then serves until
 * SIGINT/SIGTERM (or `signal`).
 */
export async function engineServe(opts: EngineServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const port = opts.port === undefined ? 0 : Number(opts.port);
  if (opts.as !== undefined && !(opts.as in ENGINE_RELEASES)) {
    throw new ClawGymError(ErrorCodes.USAGE, `--as ${opts.as} is not a release engine serve knows`, { hint: `One of ${Object.keys(ENGINE_RELEASES).join(', ')} (docs/scale.md, "The stand-ins").` });
  }
  const as = opts.as as EngineReleaseName | undefined;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ClawGymError(ErrorCodes.USAGE, `--port must be a port number (0 picks a free one), not "${opts.port}"`);
  const { engine, kernel }: { engine: Engine; kernel?: { dispose(): Promise<void> } } = opts.tokenizer !== undefined
    ? { engine: scriptedStandin({ tokenizer: opts.tokenizer, replies: opts.replies, contextLength: opts.contextLength }, io.cwd), kernel: undefined }
    : await configEngine(opts, io.cwd);
  const server = await serveEngine(engine, { host: opts.host, port, servedModelName: opts.servedModelName, sglang: opts.sglang, vllmDiskTransfer: opts.vllmDiskTransfer, vllmWeightInfo: opts.vllmWeightInfo, sglangDeterministic: opts.sglangDeterministic, ...(as ? { as } : {}) });
  const release = releaseOf({ sglang: opts.sglang, vllmWeightInfo: opts.vllmWeightInfo, ...(as ? { as } : {}) });
  const stopped = untilStopped(io);
  io.out(`engine ${engine.name} (weights version ${engine.policyVersion()}) listening on ${server.url}${as ? `, as ${release.label} (its routes only; others answer 404)` : ''}\n` +
    (release.server !== 'sglang' ? `  vLLM:   POST ${server.url}/v1/completions (token-id prompts)${opts.vllmDiskTransfer ? ', disk weight transfer /pause … /finish_weight_update (unreleased PR #52152)' : ' (as released vLLM: no route loads full weights from a folder)'}\n` : '') +
    (release.server !== 'vllm' ? `  SGLang (${release.sglang === 'modes' ? 'with pause modes' : 'as at 0025436e: pause_generation aborts every request in flight'}): POST ${server.url}/generate, /pause_generation, /update_weights_from_disk, /continue_generation\n` : ''));
  await stopped;
  await server.close();
  await engine.close?.();
  await kernel?.dispose();
}

/** The config's in-process engine (the embedded model), in a policy folder of its own. */
async function configEngine(opts: EngineServeOptions, cwd: string) {
  const config = loadConfig({ cwd, configFile: opts.config });
  const kind = slotName(config.engine);
  if (kind === 'vllm' || kind === 'sglang') {
    throw new ClawGymError(ErrorCodes.USAGE, `engine serve serves an in-process engine, but the config's engine is "${kind}" (a client of a server)`, { hint: 'Point it at a config whose engine is the embedded model (e.g. the default clawgym.config.ts), or serve a scripted stand-in with --tokenizer.' });
  }
  const kernel = await createKernel(config);
  const engine = await (await provider(kernel, 'engine', config.engine)).create(slotOptions(config.engine), {
    // A policy of its own: this process serves; the trainer's weights arrive through the update routes.
    runDir: resolve(config.rootDir, config.run.outDir, `engine-serve-${process.pid}`), seed: config.run.seed, rootDir: config.rootDir,
  });
  return { engine, kernel };
}
