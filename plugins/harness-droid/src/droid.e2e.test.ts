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

describeIf(missing, 'a Factory Droid compaction through the proxy (e2e)', () => {
  it('past compactionTokenLimit the summarising call is classified compaction; the agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: droidHarness,
      rolloutId: 'droid-compaction',
      // The first call alone is ~33k tokens (byte-level ChatML, 13 tools): past 30000, Droid
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
