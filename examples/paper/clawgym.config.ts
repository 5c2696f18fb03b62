import { defineConfig } from '@clawgym/core';
import { homedir } from 'node:os';
import taskFormats from '@clawgym/task-formats';

/**
 * The paper's run: a Qwen3 policy trained with GRPO on ClawGym-Task through OpenClaw and Claude
 * Code mixed, Pass@1 held out on ClawGym-Bench, every rollout in a Docker sandbox of the OpenClaw
 * image and graded by its task's own reward.sh, as ClawGym-RL grades it. Settings from
 * ClawGym-RL's RL/run_qwen3_4b.sh: 8 tasks a step, 8 samples per task (the GRPO group), learning
 * rate 1e-6, 65,536-token context, 8,192 tokens per reply, evaluation every 5 steps.
 *
 * Set, or edit below (README.md says how to get each):
 *   CLAWGYM_TASK_DIR    ClawGym-Task folder (RL/data/clawgym_train)     default <this folder>/data/clawgym_train
 *   CLAWGYM_BENCH_DIR   ClawGym-Bench folder (RL/data/clawgym_eval)     default <this folder>/data/clawgym_eval
 *   QWEN3_TOKENIZER     the model's Hugging Face folder (tokenizer)      default <this folder>/models/qwen3-4b
 *   TINKER_URL          SkyRL's Tinker server (or hosted Tinker)          default http://127.0.0.1:8000
 *   PAPER_ENGINE        who samples: `tinker` (default: SkyRL's own vLLM engines, which it syncs
 *                       itself on every publish), or `vllm` / `sglang` (a server of your own at
 *                       ENGINE_URL that loads each published checkpoint from SKYRL_CHECKPOINTS)
 *   ENGINE_URL          that vLLM or SGLang server                        default http://127.0.0.1:8001
 *   SKYRL_CHECKPOINTS   where this machine (and that server) sees SkyRL's --checkpoints-base
 *
 * Why `tinker` first: SkyRL's FSDP backend starts its own vLLM engines and syncs them over NCCL on
 * every save_weights_for_sampler whoever samples (skyrl/backends/skyrl_train_backend.py @ a9564572,
 * save_sampler_checkpoint), so a server of your own is a second copy of the policy; started with
 * `trainer.placement.colocate_all: false`, SkyRL forwards asample straight to those engines
 * (skyrl/tinker/api.py, SkyRLTrainInferenceForwardingClient). docs/scale.md has the launch lines.
 *
 * The one switch, CLAWGYM_STANDINS=1: ClawGym's own servers stand in for the model's, so the
 * whole path runs on one machine without a GPU or weights: `clawgym trainer serve --tokenizer`
 * (a unigram policy over Qwen3's vocabulary behind the Tinker API, at TINKER_URL, as strict as
 * SkyRL's FSDP backend; `--as skyrl@0.3.0` or `skyrl@main` for that release's routes and request
 * models) trains and, on the default route, samples; with PAPER_ENGINE=sglang, `clawgym engine
 * serve --tokenizer` (scripted replies in Qwen3's tokens, at ENGINE_URL, speaking SGLang's
 * protocol) samples instead. Two steps of two tasks. Neither stand-in's replies will solve these
 * tasks. (examples/paper/two-step.sh.)
 *   STANDIN_WEIGHTS     with PAPER_ENGINE=sglang: where the trainer's sampler archives are unpacked  default <outDir>/paper-standins-weights
 *   CLAWGYM_SANDBOX     `local`: bubblewrap sandboxes on the image's root filesystem instead of Docker
 *   OPENCLAW_ROOTFS     that root filesystem           default ~/.cache/clawgym/images/openclaw-1/rootfs
 */
const env = (name: string, fallback: string) => process.env[name] ?? fallback;

/** Where the parts are, and whether the stand-ins replace the engine and the trainer. */
export interface PaperSetup {
  taskDir: string;
  benchDir: string;
  tokenizer: string;
  tinkerUrl: string;
  standins: boolean;
  /** Who samples (real servers): SkyRL itself (`tinker`, the default), or a vLLM/SGLang server at `engineUrl`. */
  engine?: 'tinker' | 'vllm' | 'sglang';
  /** A vLLM/SGLang server (`engine`), or the stand-in engine (`clawgym engine serve --tokenizer`). */
  engineUrl?: string;
  /** Where this machine and the vLLM/SGLang server see SkyRL's `--checkpoints-base` (the direct routes need it). */
  checkpointsDir?: string;
  /** Where the stand-in trainer's sampler archives are unpacked for the engine to load. */
  weightsDir?: string;
  /** A root filesystem of the OpenClaw image: bubblewrap sandboxes on it instead of Docker. */
  localRootfs?: string;
}

/** Who samples on real servers: SkyRL's own engines (`tinker`), or a vLLM/SGLang server of your own. */
function realEngine(p: PaperSetup, tinker: { baseUrl: string; baseModel: string }) {
  const engine = p.engine ?? 'tinker';
  if (engine === 'tinker') return { use: 'tinker', options: { ...tinker, tokenizer: p.tokenizer, contextLength: 65_536 } };
  return { use: engine, options: { baseUrl: p.engineUrl ?? 'http://127.0.0.1:8001', model: 'Qwen/Qwen3-4B', tokenizer: p.tokenizer, contextLength: 65_536 } };
}

export function paperConfig(p: PaperSetup) {
  const tinker = { baseUrl: p.tinkerUrl, baseModel: 'Qwen/Qwen3-4B' };
  return defineConfig({
    name: p.standins ? 'paper-standins' : 'paper',
    plugins: [taskFormats({
      clawgymBench: [
        { dir: p.taskDir, name: 'clawgym-task', testFraction: 0 },
        { dir: p.benchDir, name: 'clawgym-bench', testFraction: 1 },
      ],
    })],
    tasks: ['clawgym-task', 'clawgym-bench'],
    // The OpenClaw image has both CLIs on PATH (scripts/openclaw-image.sh).
    harnesses: [
      { use: 'openclaw', options: { contextWindow: 65_536, maxTokens: 8192, requestTimeoutSeconds: 900 } },
      { use: 'claude-code', options: { bin: 'claude' } },
    ],
    // The stand-ins take the same route: engine 'tinker' samples through the trainer stand-in's
    // asample (tinker:// paths, no folder); 'sglang' (or 'vllm') is the engine stand-in, loading
    // full weights through /update_weights_from_disk (the SkyRL + SGLang combination of
    // docs/scale.md) from the folder the trainer's archives are unpacked in. No LoRA: the
    // unigram trainer has none.
    engine: p.standins && (p.engine ?? 'tinker') !== 'tinker'
      ? { use: p.engine as 'vllm' | 'sglang', options: { baseUrl: p.engineUrl ?? 'http://127.0.0.1:8001', model: 'Qwen/Qwen3-4B', tokenizer: p.tokenizer, contextLength: 65_536 } }
      : realEngine(p, tinker),
    trainer: p.standins
      ? { use: 'tinker', options: { ...tinker, loraRank: 0, optimizer: { lr: 1e-2 }, ...((p.engine ?? 'tinker') !== 'tinker' ? { weightsDir: p.weightsDir ?? `${__dirname}/../../runs/paper-standins-weights` } : {}) } }
      // LoRA rank 32; SkyRL's FSDP backend exports it as a PEFT adapter, which vLLM and SGLang load
      // with their LoRA routes. With engine 'tinker' no folder is needed: SkyRL samples its own.
      : { use: 'tinker', options: { ...tinker, loraRank: 32, optimizer: { lr: 1e-6 }, ...((p.engine ?? 'tinker') !== 'tinker' && p.checkpointsDir ? { checkpointsDir: p.checkpointsDir } : {}) } },
    sandbox: p.localRootfs
      ? { use: 'local', options: { rootfs: p.localRootfs } }
      : { use: 'docker', options: { image: 'clawgym-openclaw:1' } },
    algorithm: 'grpo',
    run: p.standins
      ? { steps: 2, tasksPerStep: 2, groupSize: 2, concurrency: 2, evalEvery: 0, evalTasks: 2, rolloutTimeoutMs: 600_000, outDir: '../../runs' }
      : { steps: 200, tasksPerStep: 8, groupSize: 8, concurrency: 64, evalEvery: 5, evalTasks: 200, rolloutTimeoutMs: 900_000, outDir: '../../runs' },
  });
}

export default paperConfig({
  taskDir: env('CLAWGYM_TASK_DIR', `${__dirname}/data/clawgym_train`),
  benchDir: env('CLAWGYM_BENCH_DIR', `${__dirname}/data/clawgym_eval`),
  tokenizer: env('QWEN3_TOKENIZER', `${__dirname}/models/qwen3-4b`),
  tinkerUrl: env('TINKER_URL', 'http://127.0.0.1:8000'),
  standins: process.env.CLAWGYM_STANDINS === '1',
  engine: env('PAPER_ENGINE', 'tinker') as PaperSetup['engine'],
  engineUrl: env('ENGINE_URL', 'http://127.0.0.1:8001'),
  checkpointsDir: process.env.SKYRL_CHECKPOINTS,
  weightsDir: process.env.STANDIN_WEIGHTS,
  localRootfs: process.env.CLAWGYM_SANDBOX === 'local' ? env('OPENCLAW_ROOTFS', `${homedir()}/.cache/clawgym/images/openclaw-1/rootfs`) : undefined,
});
