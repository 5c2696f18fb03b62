import { requireInstalled } from '../../util/installed';

export interface EngineServeOptions {
  config?: string;
  host?: string;
  port?: string;
  servedModelName?: string;
  sglang?: '0025436e' | 'modes';
  vllmDiskTransfer?: boolean;
  vllmWeightInfo?: boolean;
  sglangDeterministic?: boolean;
}

/**
 * `clawgym engine serve`: the config's in-process engine (the embedded model) behind vLLM's and
 * SGLang's HTTP protocols, weight-update routes included, so `engine: 'vllm' | 'sglang'` in
 * another process drives it as it would a real server. The stand-in ships with those engines'
 * package, `@clawgym/engine-vllm`.
 */
export async function engineServe(opts: EngineServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const served = requireInstalled<{ engineServe: typeof engineServe }>('@clawgym/engine-vllm', io.cwd, 'clawgym engine serve');
  await served.engineServe(opts, io);
}
