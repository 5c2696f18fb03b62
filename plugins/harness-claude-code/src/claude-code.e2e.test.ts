import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { bubblewrapMissing, describeIf, expectHarnessRollout, harnessE2ePrerequisites, removeTempProjects, runHarnessOnce, tempProject } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { claudeCodeHarness } from './index';


const { cli, missing } = harnessE2ePrerequisites('claude-code');

describeIf(missing, 'real Claude Code CLI through the proxy (e2e)', () => {
  it('writes the file the script asks for, and every call after the first reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: claudeCodeHarness,
      options: { bin: 'bin' in cli ? cli.bin : '' },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      // Four main-agent calls: write, check with Bash, read back, finish.
      script: ({ callIndex, workspace }) => [
        { text: 'I will write the file.', toolCalls: [{ name: 'Write', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] },
        { toolCalls: [{ name: 'Bash', arguments: { command: 'ls -l hello.txt', description: 'List the file' } }] },
        { text: 'Reading it back.', toolCalls: [{ name: 'Read', arguments: { file_path: join(workspace, 'hello.txt') } }] },
        { text: 'done' },
      ][Math.min(callIndex, 3)]!,
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'anthropic-messages', calls: 4 });
      const [first, second] = run.records;
      expect(Array.from(second!.promptIds.subarray(0, first!.promptIds.length + first!.outputIds.length))).toEqual([...first!.promptIds, ...first!.outputIds]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

// `clawgym eval` runs its rollouts in the default local sandbox, which refuses to run without bubblewrap.
const oracleMissing = missing ?? bubblewrapMissing();

describeIf(oracleMissing, 'the task oracle through the real Claude Code CLI (e2e)', () => {
  afterAll(removeTempProjects);

  it('plays built-in tasks with Claude Code\'s own tools (Read, Write, Bash): every verifier passes', () => {
    const repo = resolve(__dirname, '..', '..', '..');
    const cc = JSON.stringify({ use: 'claude-code', options: { bin: 'bin' in cli ? cli.bin : '', tools: ['Bash', 'Read', 'Write'] } });
    const dir = tempProject({ 'clawgym.config.mjs': `export default {
  harnesses: [${cc}], tasks: [{ use: 'builtin', options: { families: ['vocab-upper', 'transform', 'shell', 'several-files'] } }],
  run: { concurrency: 4, rolloutTimeoutMs: 60000 },
};\n` }, 'clawgym-cc-oracle-');
    const r = spawnSync(process.execPath, [join(repo, 'core', 'bin', 'clawgym.js'), 'eval', '--engine', 'oracle', '--limit', '8', '--json'], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
    expect(r.status).toBe(0);
    const rows = (JSON.parse(r.stdout) as { rows: { harness: string; category: string; tasks: number; pass1: number; infra: number }[] }).rows;
    expect(rows.find((x) => x.category === 'all')).toMatchObject({ harness: 'claude-code', tasks: 8, pass1: 1, infra: 0 });
    expect(rows.map((x) => x.category).sort()).toEqual(['all', 'several-files', 'shell', 'transform', 'vocab-upper']);
  }, 240_000);
});

describeIf(missing, 'a Claude Code subagent through the proxy (e2e)', () => {
  it('the Agent tool\'s subagent calls are classified subagent and stay out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: claudeCodeHarness,
      rolloutId: 'claude-code-subagent',
      options: { bin: 'bin' in cli ? cli.bin : '', tools: ['Bash', 'Read', 'Write', 'Agent'] },
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 120_000,
      // The subagent's system prompt carries cc_is_subagent=true (2.1.332); it answers at once. The
      // Agent tool runs it in the background: the main agent hears "running", ends its turn, and is
      // called again with the subagent's result as a task notification.
      script: ({ prompt }) => (/cc_is_subagent=true/.test(prompt) ? { text: 'nothing to report' }
        : /<tool_response>/.test(prompt) ? { text: 'done' }
          : { toolCalls: [{ name: 'Agent', arguments: { description: 'Look around', prompt: 'Look around the workspace and report.', subagent_type: 'general-purpose' } }] }),
    });
    try {
      const roles = run.records.map((r) => r.role);
      expect(roles.filter((r) => r === 'subagent').length).toBeGreaterThanOrEqual(1);
      expect(roles.every((r) => r === 'main' || r === 'subagent')).toBe(true);
      // One line for the agent (root), one for the subagent, whatever the number of its calls.
      expect(new Set(run.records.map((r) => `${r.lineage!.id} ${r.lineage!.cause}`))).toEqual(new Set(['0 root', '1 subagent']));
      // Unclassified, the subagent's first call would count as a main fork ("message 0 differs").
      await expectHarnessRollout(run, { wireFormat: 'anthropic-messages', files: {}, mainCalls: { min: 2 }, sideRoles: { subagent: roles.filter((r) => r === 'subagent').length } });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'stock Claude Code (non-essential traffic on) through the proxy (e2e)', () => {
  it('runs as shipped (it sends HEAD /api/hello first; its outside hosts are unreachable in the sandbox): every call classified, the main calls reuse their ids', async () => {
    const run = await runHarnessOnce({
      harness: claudeCodeHarness,
      rolloutId: 'claude-code-stock',
      options: { bin: 'bin' in cli ? cli.bin : '', nonessentialTraffic: true },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      // A JSON-schema helper call (a title) gets the JSON it asks for; the agent writes, then finishes.
      script: ({ prompt, workspace }) => (/JSON schema/.test(prompt) ? { text: '{"title":"Hello file"}' }
        : /<tool_response>/.test(prompt) ? { text: 'done' }
          : { toolCalls: [{ name: 'Write', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      expect(run.records.every((r) => r.role !== undefined)).toBe(true);
      const tito = await expectHarnessRollout(run, { wireFormat: 'anthropic-messages' });
      expect(tito.later).toBeGreaterThanOrEqual(1);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'real Claude Code CLI with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: claudeCodeHarness,
      rolloutId: 'claude-code-qwen3',
      template: qwen3,
      options: { bin: 'bin' in cli ? cli.bin : '' },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ callIndex, workspace }) => [
        { thinking: 'The file does not exist yet.', text: 'I will write the file.', toolCalls: [{ name: 'Write', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] },
        { toolCalls: [{ name: 'Bash', arguments: { command: 'ls -l hello.txt', description: 'List the file' } }] },
        { text: 'Reading it back.', toolCalls: [{ name: 'Read', arguments: { file_path: join(workspace, 'hello.txt') } }] },
        { text: 'done' },
      ][Math.min(callIndex, 3)]!,
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', calls: 4 });
    } finally {
      await run.close();
    }
  }, 180_000);
});
