import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { kiloHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('kilo');
const options = (extra: Record<string, unknown> = {}) => ({ bin: 'bin' in cli ? cli.bin : '', ...extra });

// Kilo 7.7.7's `run` names the session after the prompt: unlike OpenCode it makes no title call.
describeIf(missing, 'real Kilo Code CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; no side call; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: kiloHarness,
      rolloutId: 'kilo',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 240_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { filePath: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: {} });
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing, 'a Kilo Code subagent through the proxy (e2e)', () => {
  it('the task tool\'s subagent call is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: kiloHarness,
      rolloutId: 'kilo-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 240_000,
      script: ({ prompt }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : /Look around the workspace and report/.test(prompt) ? { text: 'nothing to report' }
          : { toolCalls: [{ name: 'task', arguments: { description: 'Look around', prompt: 'Look around the workspace and report.', subagent_type: 'general' } }] }),
    });
    try {
      // Unclassified, the subagent's call would count as a main fork.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, mainCalls: 2, sideRoles: { subagent: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'subagent', 'main']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'subagent' }, { id: 0, cause: 'root' }]);
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing, 'a Kilo Code compaction through the proxy (e2e)', () => {
  it('past the context limit the summarising call is classified compaction; the main agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: kiloHarness,
      rolloutId: 'kilo-compaction',
      // About 50k tokens of system prompt and tools (byte-level ChatML); the bash tool keeps 2000 lines (~10 kB) of
      // its output: past 56k (the limit less the reply's room) after the tool result, below it after the summary.
      options: options({ contextLimit: 58_000, outputLimit: 2000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 240_000,
      // Kilo checks the context after each reply: the call with the tool result (answered with another
      // step) comes past the limit, and the compaction follows it. The summariser's prompt quotes the
      // whole history (the seq call included): test it first.
      script: ({ prompt, workspace }) => (/You are a context summarization agent/.test(prompt) ? { text: '## Objective\n- Create hello.txt containing hi' }
        : /<tool_response>/.test(prompt) && /Continue if you have next steps/.test(prompt) ? { text: 'done' }
          : /Continue if you have next steps/.test(prompt) ? { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { filePath: join(workspace, 'hello.txt'), content: 'hi' } }] }
            : { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 3000', description: 'Count' } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', sideRoles: { compaction: 1 }, wholeReuse: false });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'main', 'compaction', 'main', 'main']);
      // The agent after the summary is a new line, started by the compaction call, and extends itself.
      expect(run.records.map((r) => r.lineage)).toEqual([
        { id: 0, cause: 'root' }, { id: 0, cause: 'root' }, { id: 1, cause: 'compaction' },
        { id: 2, cause: 'compaction', startedBy: 2 }, { id: 2, cause: 'compaction', startedBy: 2 },
      ]);
      // The calls before the compaction extend each other; the one after starts from the summary: one fork, saying where.
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([3]);
    } finally {
      await run.close();
    }
  }, 300_000);
});
