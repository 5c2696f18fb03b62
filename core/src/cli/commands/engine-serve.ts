import { requireInstalled } from '../../kernel/installed';

export interface EngineServeOptions {
  config?: string;
  host?: string;
  port?: string;
  servedModelName?: string;
  sglang?: '0025436e' | 'modes';
  vllmDiskTransfer?: boolean;
  vllmWeightInfo?: boolean;
  sglangDeterministic?: boolean;
  /** Serve the scripted engine in this Hugging Face model's tokens instead of the config's engine. */
  tokenizer?: string;
  /** With `tokenizer`: a JSON file of scripted turns. */
  replies?: string;
  /** With `tokenizer`: the context it stands for. */
  contextLength?: string;
  /** Answer as this server release does (`sglang@0025436e`, `sglang@8905cbd4`, `vllm@c8109375`, `vllm@90245f41`). */
  as?: string;
}

/**
 * `clawgym engine serve`: the config's in-process engine (the embedded model) behind vLLM's and
 * SGLang's HTTP protocols, weight-update routes included, so `engine: 'vllm' | 'sglang'` in
 * another process drives it as it would a real server. The stand-in ships in `@clawgym/standins`
 * (with the other stand-ins), resolved from the project as plugins are: core runs without it.
 */
export async function engineServe(opts: EngineServeOptions, io: { out: (s: string) => void; cwd: string; signal?: AbortSignal }): Promise<void> {
  const served = requireInstalled<{ engineServe: typeof engineServe }>('@clawgym/standins', io.cwd, 'clawgym engine serve');
  await served.engineServe(opts, io);
}
