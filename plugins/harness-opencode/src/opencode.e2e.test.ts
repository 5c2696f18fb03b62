import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { openCodeHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('opencode');
const options = (extra: Record<string, unknown> = {}) => ({ bin: 'bin' in cli ? cli.bin : '', ...extra });
const TITLE = /You are a title generator/;

describeIf(missing, 'real OpenCode CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; the session title is a side call; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: openCodeHarness,
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (TITLE.test(prompt) ? { text: 'Hello file' }
        : /<tool_response>/.test(prompt) ? { text: 'done' }
          : { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { filePath: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: { title: 1 } });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'an OpenCode subagent through the proxy (e2e)', () => {
  it('the task tool\'s subagent call is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: openCodeHarness,
      rolloutId: 'opencode-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 120_000,
      // The subagent's conversation opens with the prompt the main agent gave it; it answers at once.
      script: ({ prompt }) => (TITLE.test(prompt) ? { text: 'Look around' }
        : /<tool_response>/.test(prompt) ? { text: 'done' }
          : /Look around the workspace and report/.test(prompt) ? { text: 'nothing to report' }
            : { toolCalls: [{ name: 'task', arguments: { description: 'Look around', prompt: 'Look around the workspace and report.', subagent_type: 'general' } }] }),
    });
    try {
      // Unclassified, the subagent's call would count as a main fork ("message 1 differs").
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, mainCalls: 2, sideRoles: { title: 1, subagent: 1 } });
      // OpenCode sends the title call beside the agent's first call: either may arrive first.
      const agent = run.records.filter((r) => r.role !== 'title');
      expect(run.records.filter((r) => r.role === 'title').map((r) => r.lineage?.cause)).toEqual(['title']);
      expect(agent.map((r) => r.role)).toEqual(['main', 'subagent', 'main']);
      // Lineages: the agent's (root), the subagent's; the agent's last call is back on its own line.
      const [first, sub, last] = agent.map((r) => r.lineage);
      expect({ first: first!.cause, sub: sub!.cause, last: last!.cause, back: last!.id === first!.id, apart: sub!.id !== first!.id }).toEqual({ first: 'root', sub: 'subagent', last: 'root', back: true, apart: true });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'an OpenCode compaction through the proxy (e2e)', () => {
  it('past the context limit the summarising call is classified compaction; the main agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: openCodeHarness,
      rolloutId: 'opencode-compaction',
      // About 31k tokens of system prompt and tools (byte-level ChatML): a 14 kB tool result fills 40k.
      options: options({ contextLimit: 40_000, outputLimit: 2000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (TITLE.test(prompt) ? { text: 'Hello file' }
        : /You are a context summarization agent/.test(prompt) ? { text: '## Goal\nhello.txt written.' }
          : /Continue if you have next steps/.test(prompt) ? { text: 'done' }
            : /seq 1 3000/.test(prompt) ? { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { filePath: join(workspace, 'hello.txt'), content: 'hi' } }] }
              : { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 3000', description: 'Count' } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', sideRoles: { title: 1, compaction: 1 }, wholeReuse: false });
      expect(run.records.map((r) => r.role)).toEqual(['title', 'main', 'main', 'compaction', 'main']);
      // The agent after the summary is a new line, started by the compaction call.
      expect(run.records.map((r) => r.lineage)).toEqual([
        { id: 0, cause: 'title' }, { id: 1, cause: 'root' }, { id: 1, cause: 'root' }, { id: 2, cause: 'compaction' }, { id: 3, cause: 'compaction', startedBy: 3 },
      ]);
      // The calls before the compaction extend each other; the one after starts from the summary: one fork, saying where.
      expect(tito.reuse).toBe(1);
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([4]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'real OpenCode CLI with Qwen3\'s tokenizer and chat template (e2e)', () => {
  it('completes the task with a scripted engine answering in Qwen3\'s format; prompts and replies are Qwen3 ids, TITO reuse and drift recorded', async () => {
    const qwen3 = testModel('qwen3');
    const run = await runHarnessOnce({
      harness: openCodeHarness,
      rolloutId: 'opencode-qwen3',
      template: qwen3,
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (TITLE.test(prompt) ? { text: 'Hello file' }
        : /<tool_response>/.test(prompt) ? { text: 'done' }
          : { thinking: 'The file does not exist yet.', text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { filePath: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', wireFormat: 'openai-chat', mainCalls: 2, sideRoles: { title: 1 } });
    } finally {
      await run.close();
    }
  }, 180_000);
});
