import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { piHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('pi');
const options = (extra: Record<string, unknown> = {}) => ({ ...('bin' in cli ? { bin: cli.bin, node: cli.node } : {}), ...extra });

describeIf(missing, 'real Pi coding agent through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; every later call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: piHarness,
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', calls: 2 });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Pi compaction through the proxy (e2e)', () => {
  it('within reserveTokens of the window Pi summarises the session: that call is compaction, left out of the main reuse rate', async () => {
    const run = await runHarnessOnce({
      harness: piHarness,
      rolloutId: 'pi-compaction',
      // About 6k tokens of system prompt and tools (byte-level ChatML): a 6.4 kB tool result passes 12k - 4k.
      options: options({ contextWindow: 12_000, maxTokens: 1000, reserveTokens: 4000, keepRecentTokens: 1000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/You are a context summarization assistant/.test(prompt) ? { text: '## Goal\nhello.txt written.' }
        : /Successfully wrote/.test(prompt) ? { text: 'done' }
          : /seq 1 1500/.test(prompt) ? { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { path: join(workspace, 'hello.txt'), content: 'hi' } }] }
            : { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 1500' } }] }),
    });
    try {
      // In print mode Pi compacts after the agent's last turn, once the context is past the threshold.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 3, sideRoles: { compaction: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'main', 'main', 'compaction']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 0, cause: 'root' }, { id: 0, cause: 'root' }, { id: 1, cause: 'compaction' }]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'real Pi coding agent with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: piHarness,
      rolloutId: 'pi-qwen3',
      template: qwen3,
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { thinking: 'The file does not exist yet.', text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', wireFormat: 'openai-chat', calls: 2 });
    } finally {
      await run.close();
    }
  }, 180_000);
});
