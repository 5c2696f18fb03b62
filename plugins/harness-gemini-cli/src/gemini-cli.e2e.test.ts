import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { geminiCliHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('gemini-cli');
const options = (extra: Record<string, unknown> = {}) => ({ ...('bin' in cli ? { bin: cli.bin, node: cli.node } : {}), ...extra });

describeIf(missing, 'real Gemini CLI through the proxy (e2e, Gemini generateContent)', () => {
  it('writes the file the script asks for; every later call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: geminiCliHarness,
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'write_file', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'gemini-generate-content', calls: 2 });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Gemini CLI subagent through the proxy (e2e)', () => {
  it('invoke_agent\'s generalist is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: geminiCliHarness,
      rolloutId: 'gemini-cli-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 120_000,
      // The subagent finishes the only way it may: a complete_task call.
      script: ({ prompt }) => (/<tool_response>/.test(prompt) && /invoke_agent/.test(prompt.slice(-4000)) ? { text: 'done' }
        : /Look around the workspace and report/.test(prompt) && /"complete_task"/.test(prompt) ? { toolCalls: [{ name: 'complete_task', arguments: { result: { response: 'nothing to report' } } }] }
          : { toolCalls: [{ name: 'invoke_agent', arguments: { agent_name: 'generalist', prompt: 'Look around the workspace and report.' } }] }),
    });
    try {
      // Unclassified, the subagent's first call would count as a main fork (another system prompt).
      await expectHarnessRollout(run, { wireFormat: 'gemini-generate-content', files: {}, mainCalls: 2, sideRoles: { subagent: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'subagent', 'main']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'subagent' }, { id: 0, cause: 'root' }]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'real Gemini CLI with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: geminiCliHarness,
      rolloutId: 'gemini-cli-qwen3',
      template: qwen3,
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { thinking: 'The file does not exist yet.', text: 'Writing the file.', toolCalls: [{ name: 'write_file', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', wireFormat: 'gemini-generate-content', calls: 2 });
    } finally {
      await run.close();
    }
  }, 180_000);
});
