// The orchestrator's side: sampling and training both on the service at CLAWGYM_TEST_URL.
const retry = { attempts: 4, baseDelayMs: 100, maxDelayMs: 400, requestTimeoutMs: 60000 };
const service = { baseUrl: process.env.CLAWGYM_TEST_URL ?? 'http://127.0.0.1:8000', retry };
export default {
  name: 'remote',
  engine: { use: 'tinker', options: { ...service, contextLength: 2048 } },
  trainer: { use: 'tinker', options: { ...service, loraRank: 0, optimizer: { warmupSteps: 1 } } },
  sandbox: 'local',
  harnesses: ['agentloop'],
  tasks: [{ use: 'builtin', options: { families: ['vocab-upper'] } }],
  algorithm: 'grpo',
  run: { outDir: process.env.CLAWGYM_TEST_OUT ?? 'runs', steps: Number(process.env.CLAWGYM_TEST_STEPS ?? 3), tasksPerStep: 1, groupSize: 2, concurrency: 2, evalEvery: 0, evalTasks: 2, seed: 3 },
};
