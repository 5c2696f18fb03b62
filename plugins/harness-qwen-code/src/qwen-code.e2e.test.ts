import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
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
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', calls: { min: 2 } });
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
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, sideRoles: { memory: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'memory']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'memory' }]);
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
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', calls: { min: 2 } });
    } finally {
      await run.close();
    }
  }, 180_000);
});
