import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { openClawHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('openclaw');

describeIf(missing, 'real OpenClaw CLI through the proxy (e2e)', () => {
  it('writes the file the script asks for; TITO reuse despite the moving context message and rewritten ids', async () => {
    const run = await runHarnessOnce({
      harness: openClawHarness,
      options: 'bin' in cli ? { node: cli.node, entry: cli.bin } : {},
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 240_000,
      // Four main-agent calls: write, check with exec, read back, finish.
      script: ({ callIndex }) => [
        { toolCalls: [{ name: 'write', arguments: { path: 'hello.txt', content: 'hi' } }] },
        { text: 'Checking.', toolCalls: [{ name: 'exec', arguments: { command: 'ls -l hello.txt', title: 'list the file' } }] },
        { toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] },
        { text: 'done' },
      ][Math.min(callIndex, 3)]!,
    });
    try {
      expect(run.result.logTail).not.toMatch(/ECONNREFUSED|ENOTFOUND/);
      // OpenClaw moves its internal-context message to the end and strips '_' from call ids;
      // both are normalised away, so every later call extends the previous one.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', calls: 4 });
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing, 'real OpenClaw CLI with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: openClawHarness,
      rolloutId: 'openclaw-qwen3',
      template: qwen3,
      options: 'bin' in cli ? { node: cli.node, entry: cli.bin } : {},
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 240_000,
      script: ({ callIndex }) => [
        { thinking: 'The file does not exist yet.', toolCalls: [{ name: 'write', arguments: { path: 'hello.txt', content: 'hi' } }] },
        { text: 'Checking.', toolCalls: [{ name: 'exec', arguments: { command: 'ls -l hello.txt', title: 'list the file' } }] },
        { toolCalls: [{ name: 'read', arguments: { path: 'hello.txt' } }] },
        { text: 'done' },
      ][Math.min(callIndex, 3)]!,
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', calls: 4 });
    } finally {
      await run.close();
    }
  }, 300_000);
});
