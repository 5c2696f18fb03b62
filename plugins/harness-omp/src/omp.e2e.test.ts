import { join } from 'node:path';
import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { ompHarness } from './index';

const { cli, missing } = harnessE2ePrerequisites('omp');
const options = (extra: Record<string, unknown> = {}) => ({ ...('bin' in cli ? { bin: cli.bin, bun: cli.node } : {}), ...extra });

describeIf(missing, 'real oh-my-pi CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; no side call; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: ompHarness,
      rolloutId: 'omp',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { path: join(workspace, 'hello.txt'), content: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: {} });
    } finally {
      await run.close();
    }
  }, 180_000);
});

describeIf(missing, 'an oh-my-pi subagent through the proxy (e2e)', () => {
  it('the task tool\'s subagent call is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: ompHarness,
      rolloutId: 'omp-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 120_000,
      script: ({ prompt }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        // The subagent returns its result through `yield`, its only way to end.
        : /Look around the workspace and report/.test(prompt) ? { toolCalls: [{ name: 'yield', arguments: { data: { report: 'nothing to report' } } }] }
          : { toolCalls: [{ name: 'task', arguments: { i: 'Look around', context: 'The workspace of this task.', tasks: [{ name: 'LookAround', task: 'Look around the workspace and report.' }] } }] }),
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

describeIf(missing, 'an oh-my-pi compaction through the proxy (e2e)', () => {
  it('past compactionThresholdTokens the handoff call is classified compaction; the agent goes on from the handoff on a line it started', async () => {
    const run = await runHarnessOnce({
      harness: ompHarness,
      rolloutId: 'omp-compaction',
      // The first call is ~66k tokens (byte-level ChatML: ~18 kB of system prompt, ~47 kB of tools), below
      // 78000 less its speculation lead (12.5%): no handoff in the background. `seq 1 6000` (~29 kB) takes the
      // next past 78000 and its lead, so the handoff comes at once, after that call; the agent after it is ~67k again.
      options: options({ compactionThresholdTokens: 78_000 }),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 120_000,
      // The handoff request quotes the history (tool results included): test it first, by where it stands.
      script: ({ prompt, workspace }) => (prompt.lastIndexOf('Write a handoff document for another instance') > prompt.lastIndexOf('<tool_response>') ? { text: '## Goal\n- Create hello.txt containing hi' }
        : /Successfully wrote/.test(prompt) ? { text: 'done' }
          : /5999/.test(prompt) ? { text: 'Writing the file.', toolCalls: [{ name: 'write', arguments: { i: 'Writing the file', path: join(workspace, 'hello.txt'), content: 'hi' } }] }
            : { toolCalls: [{ name: 'bash', arguments: { i: 'Counting', command: 'seq 1 6000' } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', sideRoles: { compaction: 1 }, wholeReuse: false });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'main', 'compaction', 'main']);
      // The handoff request is the agent's own, extended by one user message: it stays on the agent's line.
      // The agent after it starts from the handoff: a new line, started by the compaction call.
      expect(run.records.map((r) => r.lineage)).toEqual([
        { id: 0, cause: 'root' }, { id: 0, cause: 'root' }, { id: 0, cause: 'root' }, { id: 1, cause: 'compaction', startedBy: 2 },
      ]);
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([3]);
    } finally {
      await run.close();
    }
  }, 180_000);
});
