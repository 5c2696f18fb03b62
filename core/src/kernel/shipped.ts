/**
 * The packages ClawGym publishes besides `@clawgym/core` (one version for all; `shipped.test.ts`
 * checks this list against the repository's plugins/). An install hint names a package only when
 * it is one of these: a name built from a plugin's name may exist on no registry.
 */
export const CLAWGYM_PACKAGES: readonly string[] = [
  '@clawgym/algo-grpo',
  '@clawgym/algo-ppo',
  '@clawgym/engine-embedded',
  '@clawgym/engine-tinker',
  '@clawgym/engine-vllm',
  '@clawgym/harness-agentloop',
  '@clawgym/harness-claude-code',
  '@clawgym/harness-codex',
  '@clawgym/harness-gemini-cli',
  '@clawgym/harness-openclaw',
  '@clawgym/harness-opencode',
  '@clawgym/harness-pi',
  '@clawgym/harness-qwen-code',
  '@clawgym/kernels-cpu',
  '@clawgym/kernels-gpujs',
  '@clawgym/model-hf',
  '@clawgym/sandbox-docker',
  '@clawgym/task-builtin',
  '@clawgym/task-formats',
  '@clawgym/task-jobbench',
  '@clawgym/task-officeqa',
];
