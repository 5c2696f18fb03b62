/**
 * The source and test of a new plugin of each kind (`clawgym new plugin --kind <kind> <name>`).
 * Each test uses the kit (`@clawgym/core/testing`) and Node's own test runner, and passes as
 * generated: it is where the author starts changing things.
 */

export type NewPluginKind = 'task' | 'harness' | 'hooks' | 'algorithm' | 'reporter';

/** `name` is the provider's name (the config's `use`); `id` a JavaScript-safe form of it. */
interface Names { name: string; id: string }

const task = ({ name, id }: Names) => ({
  index: `import { definePlugin, pickSplit, z, type Task, type TaskSuite, type Workspace } from '@clawgym/core';

const WORDS = ['apple', 'river', 'stone', 'cloud', 'maple', 'tiger', 'lemon', 'piano', 'ocean', 'zebra', 'candle', 'forest'];

/** One task: reverse the word in input.txt into output.txt. Ids are stable: the split is computed from them. */
function reverseTask(word: string): Task {
  const reversed = [...word].reverse().join('');
  return {
    id: \`${name}/reverse-\${word}\`,
    category: 'reverse',
    instruction: 'Read input.txt and write the word it holds, reversed, to output.txt.',
    async setup(ws: Workspace) { await ws.writeFile('input.txt', \`\${word}\\n\`); },
    async verify(ws: Workspace) {
      if (!(await ws.exists('output.txt'))) return { reward: 0, pass: false, details: 'output.txt is missing' };
      const got = (await ws.readFile('output.txt')).toString('utf8').trim();
      const pass = got === reversed;
      return { reward: pass ? 1 : 0, pass, details: pass ? 'reversed' : \`expected \${reversed}, got \${JSON.stringify(got.slice(0, 40))}\` };
    },
    // What a perfect agent does, as tool calls (agentloop's tool names): \`clawgym eval --engine oracle\` plays it.
    oracle: [{ toolCalls: [{ name: 'read_file', arguments: { path: 'input.txt' } }] }, { toolCalls: [{ name: 'write_file', arguments: { path: 'output.txt', content: reversed } }] }],
  };
}

/** The \`${name}\` task suite: \`tasks: ['${name}']\` in clawgym.config.ts. */
export const ${id}Suite: TaskSuite = {
  name: '${name}',
  async tasks(split, { seed, limit }) {
    // pickSplit keeps about a fifth of the ids for 'test' (held out), by a hash of each id.
    return pickSplit(WORDS.map(reverseTask), split, { seed, limit });
  },
};

export default definePlugin({
  name: '${name}',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.taskSuite(${id}Suite);
  },
});
`,
  test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, provider } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import plugin from './index';

async function suite() {
  const kernel = await createTestKernel({ plugins: [plugin()] });
  return provider(kernel, 'taskSuite', '${name}');
}

test('train and test splits are disjoint, neither is empty, and the seed only reorders them', async () => {
  const s = await suite();
  const train = (await s.tasks('train', { seed: 1 })).map((t) => t.id);
  const held = (await s.tasks('test', { seed: 1 })).map((t) => t.id);
  assert.ok(train.length > 0 && held.length > 0);
  assert.deepEqual(train.filter((id) => held.includes(id)), []);
  assert.deepEqual((await s.tasks('test', { seed: 2 })).map((t) => t.id).sort(), [...held].sort());
});

test('an untouched workspace fails, and what the oracle writes passes', async () => {
  for (const task of await (await suite()).tasks('train', { seed: 1 })) {
    const dir = mkdtempSync(join(tmpdir(), '${name}-'));
    try {
      const ws = fsWorkspace(dir);
      await task.setup(ws);
      assert.equal((await task.verify(ws)).pass, false);
      const turns = typeof task.oracle === 'function' ? await task.oracle() : task.oracle ?? [];
      for (const call of turns.flatMap((t) => t.toolCalls)) {
        if (call.name === 'write_file') await ws.writeFile(String(call.arguments.path), String(call.arguments.content));
      }
      assert.equal((await task.verify(ws)).pass, true, task.id);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
`,
});

const harness = ({ name, id }: Names) => ({
  index: `import { definePlugin, z, type Harness } from '@clawgym/core';

/**
 * The \`${name}\` harness: runs an agent CLI inside the sandbox, pointed at the serving proxy
 * (\`endpoint.baseUrl\`, an OpenAI-compatible API). Here the "CLI" is a few lines of Node that ask
 * the model once and write its answer to answer.txt: replace them with your agent's command.
 */
export const ${id}Harness: Harness = {
  name: '${name}',
  wireFormat: 'openai-chat',
  async check() {
    return { ok: true, reason: 'runs node inside the sandbox' };
  },
  async run(ctx) {
    const script = \`const [url, key, model, prompt] = process.argv.slice(1);
fetch(url + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key },
  body: JSON.stringify({ model, messages: [{ role: 'user', content: prompt }] }) })
  .then((r) => r.json()).then((j) => require('node:fs').writeFileSync('answer.txt', j.choices[0].message.content ?? ''));\`;
    const result = await ctx.sandbox.exec(['node', '-e', script, ctx.endpoint.baseUrl, ctx.endpoint.apiKey, ctx.endpoint.model, ctx.instruction], {
      cwd: ctx.sandbox.workspacePath, timeoutMs: ctx.timeoutMs, signal: ctx.signal,
    });
    return { exitCode: result.exitCode, timedOut: result.timedOut, logTail: (result.stdout + result.stderr).slice(-4000) };
  },
};

export default definePlugin({
  name: '${name}',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.harness(${id}Harness);
  },
});
`,
  test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { provider } from '@clawgym/core';
import { createTestKernel, recordingSandbox } from '@clawgym/core/testing';
import plugin from './index';

test('runs its command in the sandbox\\'s workspace, with the proxy\\'s endpoint and the instruction', async () => {
  const kernel = await createTestKernel({ plugins: [plugin()], config: { harnesses: ['${name}'] } });
  const harness = await provider(kernel, 'harness', '${name}');
  assert.equal((await harness.check()).ok, true);
  const sandbox = recordingSandbox();
  try {
    const endpoint = { baseUrl: sandbox.modelBaseUrl, apiKey: 'k-1', model: 'policy' };
    const result = await harness.run({ sandbox, endpoint, instruction: 'Say hi.', timeoutMs: 10_000, signal: new AbortController().signal, options: {} });
    assert.equal(result.exitCode, 0);
    const [run] = sandbox.execs;
    assert.equal(run?.argv[0], 'node');
    assert.deepEqual(run?.argv.slice(-4), [sandbox.modelBaseUrl, 'k-1', 'policy', 'Say hi.']);
    assert.equal(run?.options.cwd, sandbox.workspacePath);
  } finally {
    await sandbox.destroy();
  }
});
`,
});

const hooks = ({ name }: Names) => ({
  index: `import { definePlugin, z } from '@clawgym/core';

/**
 * \`${name}\`: a plugin that only taps hooks (list it in the config's \`plugins\`). It clips every
 * token's advantage to [-limit, limit] after the algorithm computed them, and reports how many it
 * clipped: a key in \`metrics\` of the result shows up as \`adv/<key>\` in metrics.jsonl.
 */
export default definePlugin({
  name: '${name}',
  core: '^0.1.0',
  options: z.strictObject({ limit: z.number().positive().default(1) }),
  apply(api, options) {
    api.hooks.computeAdvantage.tap({}, (result) => {
      let clipped = 0;
      for (const nodes of result.advantages.values()) {
        for (const values of nodes.values()) {
          for (let i = 0; i < values.length; i++) {
            const v = values[i]!;
            if (Math.abs(v) > options.limit) { values[i] = Math.sign(v) * options.limit; clipped++; }
          }
        }
      }
      return { ...result, metrics: { ...result.metrics, clipped } };
    });
  },
});
`,
  test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeStepAdvantages, trainableNodes, type ClawGymPlugin } from '@clawgym/core';
import { createTestKernel, makeTree } from '@clawgym/core/testing';
import plugin from './index';

/** An algorithm for the test: each generated token's advantage is its rollout's reward. */
const rewardAsAdvantage: ClawGymPlugin = {
  name: 'test:reward',
  apply(api) {
    api.provide.algorithm({
      name: 'reward', needsValues: false,
      computeAdvantages: ({ trees }) => ({
        algorithm: 'reward', metrics: {},
        advantages: new Map(trees.map((t) => [t.rolloutId, new Map(trainableNodes(t).map((n) => [n.id, new Float32Array(n.tokens.length).fill(t.reward)]))])),
      }),
    });
  },
};

test('clips advantages to the limit and counts the clipped tokens in the metrics', async () => {
  const kernel = await createTestKernel({ plugins: [rewardAsAdvantage, plugin({ limit: 1 })], config: { algorithm: 'reward' } });
  const trees = [makeTree({ rolloutId: 'a', reward: 3, generated: [2] }), makeTree({ rolloutId: 'b', reward: 0.5, generated: [2] })];
  const result = await computeStepAdvantages(kernel, trees);
  assert.deepEqual([...[...result.advantages.get('a')!.values()][0]!], [1, 1]);
  assert.deepEqual([...[...result.advantages.get('b')!.values()][0]!], [0.5, 0.5]);
  assert.equal(result.metrics.clipped, 2);
});
`,
});

const algorithm = ({ name, id }: Names) => ({
  index: `import { definePlugin, trainableNodes, z, type Algorithm } from '@clawgym/core';

/**
 * The \`${name}\` algorithm (\`algorithm: '${name}'\` in the config): REINFORCE with a leave-one-out
 * baseline (RLOO) over each task's group: a rollout's advantage is its reward minus the mean
 * reward of the other rollouts of the same task, on every token it generated.
 */
export const ${id}Algorithm: Algorithm = {
  name: '${name}',
  needsValues: false,
  computeAdvantages({ trees }) {
    const groups = new Map<string, number[]>();
    for (const t of trees) groups.set(t.taskId, [...(groups.get(t.taskId) ?? []), t.reward]);
    const advantages = new Map<string, Map<number, Float32Array>>();
    for (const t of trees) {
      const rewards = groups.get(t.taskId)!;
      const others = rewards.length > 1 ? (rewards.reduce((a, b) => a + b, 0) - t.reward) / (rewards.length - 1) : t.reward;
      const a = t.reward - others;
      advantages.set(t.rolloutId, new Map(trainableNodes(t).map((n) => [n.id, new Float32Array(n.tokens.length).fill(a)])));
    }
    return { algorithm: '${name}', advantages, metrics: { groups: groups.size } };
  },
};

export default definePlugin({
  name: '${name}',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.algorithm(${id}Algorithm);
  },
});
`,
  test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { computeStepAdvantages } from '@clawgym/core';
import { createTestKernel, makeTree } from '@clawgym/core/testing';
import plugin from './index';

test('gives each rollout its reward minus the mean of the others of its task', async () => {
  const kernel = await createTestKernel({ plugins: [plugin()], config: { algorithm: '${name}' } });
  const trees = [1, 0, 0, 1].map((reward, i) => makeTree({ rolloutId: \`r\${i}\`, taskId: 't', reward, generated: [2] }));
  const result = await computeStepAdvantages(kernel, trees);
  assert.equal(result.algorithm, '${name}');
  const first = (id: string) => [...[...result.advantages.get(id)!.values()][0]!];
  assert.deepEqual(first('r0'), [1 - 1 / 3, 1 - 1 / 3].map(Math.fround));
  assert.deepEqual(first('r1'), [-2 / 3, -2 / 3].map(Math.fround));
  assert.equal(result.metrics.groups, 1);
});
`,
});

const reporter = ({ name, id }: Names) => ({
  index: `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin, z, type Reporter } from '@clawgym/core';

/** The \`${name}\` reporter (\`reporters: ['${name}', 'tensorboard', 'html']\`): each step's values as one CSV line. */
export const ${id}Reporter: Reporter = {
  name: '${name}',
  onMetrics(event, run) {
    if (event.kind !== 'step') return;
    const line = Object.entries(event.values).map(([k, v]) => \`\${k}=\${v}\`).join(',');
    appendFileSync(join(run.runDir, '${name}.csv'), \`\${event.step},\${line}\\n\`);
  },
  async render(runDir) {
    return join(runDir, '${name}.csv');
  },
};

export default definePlugin({
  name: '${name}',
  core: '^0.1.0',
  options: z.strictObject({}),
  apply(api) {
    api.provide.reporter(${id}Reporter);
  },
});
`,
  test: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provider } from '@clawgym/core';
import { createTestKernel } from '@clawgym/core/testing';
import plugin from './index';

test('writes one line per step event, and none for the others', async () => {
  const kernel = await createTestKernel({ plugins: [plugin()], config: { reporters: ['${name}'] } });
  const reporter = await provider(kernel, 'reporter', '${name}');
  const runDir = mkdtempSync(join(tmpdir(), '${name}-'));
  try {
    const run = { runId: 'test', runDir };
    await reporter.onMetrics?.({ kind: 'info', step: 0, time: 0, values: { event: 'start' } }, run);
    await reporter.onMetrics?.({ kind: 'step', step: 1, time: 1, values: { 'train/loss': 0.5 } }, run);
    await reporter.onMetrics?.({ kind: 'step', step: 2, time: 2, values: { 'train/loss': 0.25 } }, run);
    assert.equal(await reporter.render?.(runDir), join(runDir, '${name}.csv'));
    assert.equal(readFileSync(join(runDir, '${name}.csv'), 'utf8'), '1,train/loss=0.5\\n2,train/loss=0.25\\n');
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});
`,
});

/** `src/index.ts` and `src/index.test.ts` of a new plugin. */
export function pluginSources(kind: NewPluginKind, names: Names): { index: string; test: string } {
  return { task, harness, hooks, algorithm, reporter }[kind](names);
}
