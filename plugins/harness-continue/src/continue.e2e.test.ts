import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { continueHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('continue');
const options = (extra: Record<string, unknown> = {}) => ('bin' in cli ? { bin: cli.bin, node: cli.node, ...extra } : extra);

describeIf(missing, 'real Continue CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: continueHarness,
      rolloutId: 'continue',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'Write', arguments: { filepath: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: {} });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'a Continue compaction through the proxy (e2e)', () => {
  it('past its threshold the summary call is classified compaction; the main agent goes on from the summary', async () => {
    const run = await runHarnessOnce({
      harness: continueHarness,
      rolloutId: 'continue-compaction',
      // Continue compacts when its estimate of the next request passes the context length less the
      // reply's room and a buffer (here 12000 - 2000 - 2000 tokens); one line of `seq` (~39 kB) does.
      options: options({ contextLimit: 12_000, outputLimit: 2000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      // The summary request comes first (it carries the tools and the main system prompt); after it
      // the agent has only the summary, as an assistant message.
      script: ({ prompt, workspace }) => (/Please provide a concise summary of our conversation so far/.test(prompt) ? { text: '## Goal\nCreate hello.txt containing hi' }
        : /<tool_response>/.test(prompt) && /Writing the file/.test(prompt) ? { text: 'done' }
          : /## Goal/.test(prompt) ? { text: 'Writing the file.', toolCalls: [{ name: 'Write', arguments: { filepath: join(workspace, 'hello.txt'), content: 'hi' } }] }
            : { toolCalls: [{ name: 'Bash', arguments: { command: "seq -s ' ' 1 8000" } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', sideRoles: { compaction: 1 }, wholeReuse: false });
      // After a turn that compacted, Continue adds a user "continue" and asks once more: a fifth call.
      expect(run.records.map((r) => r.role)).toEqual(['main', 'compaction', 'main', 'main', 'main']);
      const after = { id: 2, cause: 'compaction', startedBy: 1 };
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'compaction' }, after, after, after]);
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([2]);
    } finally {
      await run.close();
    }
  }, 180_000);
});
