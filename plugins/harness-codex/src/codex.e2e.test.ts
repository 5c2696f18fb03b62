import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { codexHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('codex');

describeIf(missing, 'real Codex CLI through the proxy (e2e, OpenAI Responses)', () => {
  it('runs the scripted shell command that writes the file; every later call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: codexHarness,
      options: { bin: 'bin' in cli ? cli.bin : '' },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ callIndex }) => (callIndex === 0
        ? { text: 'Writing the file.', toolCalls: [{ name: 'exec_command', arguments: { cmd: 'printf hi > hello.txt' } }] }
        : { text: 'done' }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-responses', calls: { min: 2 } });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Codex compaction through the proxy (e2e)', () => {
  it('past model_auto_compact_token_limit the compaction call is classified compaction; the main agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: codexHarness,
      rolloutId: 'codex-compaction',
      options: { bin: 'bin' in cli ? cli.bin : '', autoCompactTokenLimit: 3000 },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, callIndex }) => (prompt.includes('CONTEXT CHECKPOINT COMPACTION') ? { text: 'Summary: hello.txt is written.' }
        : callIndex === 0 ? { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'printf hi > hello.txt' } }] } : { text: 'done' }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-responses', sideRoles: { compaction: 1 }, wholeReuse: false });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'compaction', 'main']);
      // The agent after the summary is a new line, started by the compaction call (0% reuse is that line's start, not a loss).
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'compaction' }, { id: 2, cause: 'compaction', startedBy: 1 }]);
      // Codex replaces the history after the task with the summary: the main agent's next call is a
      // fork from call 0 (our reply is not in it), and says so; not a "tool list" difference with the compaction.
      expect(tito.forkReasons.map((f) => f.reason)).toEqual(["call 0's reply was not echoed as we returned it (message 4 differs)"]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'real Codex CLI with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: codexHarness,
      rolloutId: 'codex-qwen3',
      template: qwen3,
      options: { bin: 'bin' in cli ? cli.bin : '' },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ callIndex }) => (callIndex === 0
        ? { thinking: 'A shell command writes it.', text: 'Writing the file.', toolCalls: [{ name: 'exec_command', arguments: { cmd: 'printf hi > hello.txt' } }] }
        : { text: 'done' }),
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', calls: { min: 2 } });
    } finally {
      await run.close();
    }
  }, 180_000);
});
