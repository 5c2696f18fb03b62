import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { titoStats } from '@clawgym/core';
import { describeIf, harnessE2ePrerequisites, expectRealTemplateRollout, runHarnessOnce, testModel } from '@clawgym/core/testing';
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
      expect(run.result).toMatchObject({ exitCode: 0, timedOut: false });
      expect(await readFile(join(run.sandbox.workspaceHostPath, 'hello.txt'), 'utf8')).toBe('hi');
      expect(run.records.length).toBe(4);
      expect(run.records.every((r) => r.wireFormat === 'openai-chat')).toBe(true);
      const tito = titoStats(run.records);
      // OpenClaw moves its internal-context message to the end and strips '_' from call ids;
      // both are normalised away, so every later call extends the previous one.
      expect(tito.forkReasons).toEqual([]);
      expect(tito.rate).toBe(1);
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
      const facts = await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>' });
      expect(run.records.length).toBe(4);
      expect(facts.drift.fork ?? 0).toBe(0);
    } finally {
      await run.close();
    }
  }, 300_000);
});
