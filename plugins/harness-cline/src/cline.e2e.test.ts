import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { clineHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('cline');
const options = (extra: Record<string, unknown> = {}) => ({ bin: 'bin' in cli ? cli.bin : '', ...extra });

describeIf(missing, 'real Cline CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: clineHarness,
      rolloutId: 'cline',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'editor', arguments: { path: join(workspace, 'hello.txt'), new_text: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: {} });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Cline subagent through the proxy (e2e)', () => {
  it('the spawn_agent subagent\'s call is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: clineHarness,
      rolloutId: 'cline-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 120_000,
      script: ({ prompt }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : /Look around the workspace and report/.test(prompt) ? { text: 'nothing to report' }
          : { toolCalls: [{ name: 'spawn_agent', arguments: { systemPrompt: 'You look at files.', task: 'Look around the workspace and report.' } }] }),
    });
    try {
      // Unclassified, the subagent's call would count as a main fork.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, mainCalls: 2, sideRoles: { subagent: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'subagent', 'main']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'subagent' }, { id: 0, cause: 'root' }]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Cline compaction through the proxy (e2e)', () => {
  it('past 90% of the context window the summarising call is classified compaction; the main agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: clineHarness,
      rolloutId: 'cline-compaction',
      // About 22k tokens of system prompt and tools (byte-level ChatML); `seq 1 6000` adds ~29 kB: the
      // reply to the call with its output reports ~32k input tokens, past 90% of 30000, so Cline
      // compacts before its next call.
      options: options({ contextLimit: 30_000, outputLimit: 2000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      // The summariser's prompt quotes the history: test it first.
      script: ({ prompt, workspace }) => (/Summarize the provided coding session/.test(prompt) ? { text: '## Goal\nCreate hello.txt containing hi' }
        : /Context summary:/.test(prompt) ? { text: 'done' }
          : /<tool_response>/.test(prompt) ? { text: 'Writing the file.', toolCalls: [{ name: 'editor', arguments: { path: join(workspace, 'hello.txt'), new_text: 'hi' } }] }
            : { toolCalls: [{ name: 'run_commands', arguments: { commands: ['seq 1 6000'] } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', sideRoles: { compaction: 1 }, wholeReuse: false });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'main', 'compaction', 'main']);
      // The agent after the summary is a new line, started by the compaction call.
      expect(run.records.map((r) => r.lineage)).toEqual([
        { id: 0, cause: 'root' }, { id: 0, cause: 'root' }, { id: 1, cause: 'compaction' }, { id: 2, cause: 'compaction', startedBy: 2 },
      ]);
      // The calls before the compaction extend each other; the one after starts from the summary: one fork, saying where.
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([3]);
    } finally {
      await run.close();
    }
  }, 180_000);
});
