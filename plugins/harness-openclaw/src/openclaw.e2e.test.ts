import { describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { expectRealTemplateRollout, testModel } from '@clawgym/model-hf/testing';
import { OPENCLAW_COMPACTION_MARKER } from './classify';
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
      // OpenClaw moves its internal-context message to the end and strips '_' from call ids;
      // both are normalised away, so every later call extends the previous one.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', calls: 4 });
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing, 'an OpenClaw compaction through the proxy (e2e)', () => {
  it('when the context nears its window mid-turn, OpenClaw summarises the history: those calls are compaction, and the agent goes on from the summary on a new line', async () => {
    // OpenClaw estimates ~4 characters a token and keeps a quarter of the window (here 5000) for
    // the reply: three 6000-character tool results push a 20000-token window over, and the
    // mid-turn precheck (off by default) compacts before the next call.
    let main = 0;
    const run = await runHarnessOnce({
      harness: openClawHarness,
      rolloutId: 'openclaw-compaction',
      options: { ...('bin' in cli ? { node: cli.node, entry: cli.bin } : {}), contextWindow: 20_000, compaction: { midTurnPrecheck: { enabled: true } } },
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 240_000,
      script: ({ prompt }) => {
        if (prompt.includes(OPENCLAW_COMPACTION_MARKER)) return { text: '## Goal\nCreate hello.txt containing hi\n## Progress\nhello.txt is written.' };
        const i = main++;
        if (i === 0) return { toolCalls: [{ name: 'write', arguments: { path: 'hello.txt', content: 'hi' } }] };
        if (i <= 4) return { toolCalls: [{ name: 'exec', arguments: { command: "head -c 6000 /dev/zero | tr '\\0' x", title: 'print 6000 x' } }] };
        return { text: 'done' };
      },
    });
    try {
      const roles = run.records.map((r) => r.role);
      const compactions = run.records.filter((r) => r.role === 'compaction');
      // Chunk summaries, then their merge: each a conversation of its own, without tools.
      expect(compactions.length).toBeGreaterThanOrEqual(1);
      expect(roles).toEqual(['main', 'main', 'main', 'main', ...compactions.map(() => 'compaction'), 'main', 'main']);
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 6, sideRoles: { compaction: compactions.length }, wholeReuse: false });
      const last = compactions.at(-1)!.callIndex;
      const after = run.records.filter((r) => r.callIndex > last);
      // The agent after the summary starts a line caused by the last compaction call; its next call extends it.
      expect(after.map((r) => r.lineage)).toEqual([{ id: compactions.length + 1, cause: 'compaction', startedBy: last }, { id: compactions.length + 1, cause: 'compaction', startedBy: last }]);
      expect(run.records.slice(0, 4).map((r) => r.lineage)).toEqual(Array(4).fill({ id: 0, cause: 'root' }));
      expect(compactions.map((r) => r.lineage!.cause)).toEqual(compactions.map(() => 'compaction'));
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
      await expectRealTemplateRollout(run, qwen3, { opener: '<|im_start|>', toolCallToken: '<tool_call>', calls: 4 });
    } finally {
      await run.close();
    }
  }, 300_000);
});
