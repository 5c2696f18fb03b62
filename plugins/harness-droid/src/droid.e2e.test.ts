import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { droidHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('droid');
const options = (extra: Record<string, unknown> = {}) => ({ bin: 'bin' in cli ? cli.bin : '', ...extra });
// Droid's Create tool ends the file with a newline.
const files = { 'hello.txt': 'hi\n' };

describeIf(missing, 'real Factory Droid CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; no side call; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: droidHarness,
      rolloutId: 'droid',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'Create', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files, mainCalls: 2, sideRoles: {} });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Factory Droid subagent through the proxy (e2e)', () => {
  it('the Task tool\'s subagent call is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: droidHarness,
      rolloutId: 'droid-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 120_000,
      script: ({ prompt }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : /Look around the workspace and report/.test(prompt) ? { text: 'nothing to report' }
          : { toolCalls: [{ name: 'Task', arguments: { subagent_type: 'worker', description: 'Look around', prompt: 'Look around the workspace and report.', await: true } }] }),
    });
    try {
      // Unclassified, the subagent's call (the agent's tools less Task) would count as a main fork.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, mainCalls: 2, sideRoles: { subagent: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'subagent', 'main']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'subagent' }, { id: 0, cause: 'root' }]);
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Factory Droid compaction through the proxy (e2e)', () => {
  it('past compactionTokenLimit the summarising call is classified compaction; the agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: droidHarness,
      rolloutId: 'droid-compaction',
      // The first call alone is ~33k tokens (byte-level ChatML, 12 tools): past 30000, Droid
      // compacts before it sends the tool result back.
      options: options({ compactionTokenLimit: 30_000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      // The summariser's prompt quotes the history (the tool result included): test it first.
      script: ({ prompt, workspace }) => (/You excel at creating and maintaining summaries/.test(prompt) ? { text: '<summary>\n- Create hello.txt containing hi\n</summary>' }
        : /<tool_response>/.test(prompt) ? { text: 'done' }
          : { text: 'Writing the file.', toolCalls: [{ name: 'Create', arguments: { file_path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', files, sideRoles: { compaction: 1 }, wholeReuse: false });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'compaction', 'main']);
      // The agent after the summary is a new line, started by the compaction call.
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'compaction' }, { id: 2, cause: 'compaction', startedBy: 1 }]);
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([2]);
    } finally {
      await run.close();
    }
  }, 180_000);
});
