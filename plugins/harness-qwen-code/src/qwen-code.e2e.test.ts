import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { titoStats } from '@clawgym/core';
import { describeIf, harnessE2ePrerequisites, expectRealTemplateRollout, runHarnessOnce, testModel } from '@clawgym/core/testing';
import { qwenCodeHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('qwen-code');

describeIf(missing, 'real Qwen Code CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; every later call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: qwenCodeHarness,
      options: 'bin' in cli ? { bin: cli.bin, node: cli.node } : {},
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ callIndex, workspace }) => (callIndex === 0
        ? { text: 'Writing the file.', toolCalls: [{ name: 'write_file', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }
        : { text: 'done' }),
    });
    try {
      expect(run.result).toMatchObject({ exitCode: 0, timedOut: false });
      expect(await readFile(join(run.sandbox.workspaceHostPath, 'hello.txt'), 'utf8')).toBe('hi');
      expect(run.records.length).toBeGreaterThanOrEqual(2);
      expect(run.records.every((r) => r.wireFormat === 'openai-chat')).toBe(true);
      const tito = titoStats(run.records);
      expect(tito.forkReasons).toEqual([]);
      expect(tito.rate).toBe(1);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'Qwen Code\'s managed memory extraction subagent through the proxy (e2e)', () => {
  it('after a turn answered without a tool, the memory subagent runs on the same session: classified memory, left out of the main reuse rate', async () => {
    const run = await runHarnessOnce({
      harness: qwenCodeHarness,
      rolloutId: 'qwen-code-memory',
      options: 'bin' in cli ? { bin: cli.bin, node: cli.node } : {},
      instruction: 'Remember that I always indent with tabs. Then say ok.',
      timeoutMs: 120_000,
      // Every call answers with text: the main turn ends at once, and the memory subagent saves nothing.
      script: () => ({ text: 'ok' }),
    });
    try {
      expect(run.result).toMatchObject({ exitCode: 0, timedOut: false });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'memory']);
      const tito = titoStats(run.records);
      expect(tito).toMatchObject({ side: 1, sideRoles: { memory: 1 }, forkReasons: [] });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'real Qwen Code CLI with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: qwenCodeHarness,
      rolloutId: 'qwen-code-qwen3',
      template: qwen3,
      options: 'bin' in cli ? { bin: cli.bin, node: cli.node } : {},
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ callIndex, workspace }) => (callIndex === 0
        ? { thinking: 'The file does not exist yet.', text: 'Writing the file.', toolCalls: [{ name: 'write_file', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }
        : { text: 'done' }),
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>' });
      expect(run.records.length).toBeGreaterThanOrEqual(2);
      expect(run.records.filter((r) => r.role === 'main' && r.drift?.class === 'fork')).toEqual([]);
    } finally {
      await run.close();
    }
  }, 180_000);
});
