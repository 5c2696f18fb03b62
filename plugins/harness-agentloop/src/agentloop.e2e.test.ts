import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { netnsAvailable, titoStats } from '@clawgym/core';
import { describeIf, runHarnessOnce } from '@clawgym/core/testing';
import { agentLoopHarness } from './index';

const ns = netnsAvailable();

describeIf(ns.ok ? undefined : ns.reason, 'agentloop through the proxy (e2e)', () => {
  it('writes, lists, runs bash and finishes; every later call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: agentLoopHarness,
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 30_000,
      script: ({ callIndex }) => [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi' } }] },
        { toolCalls: [{ name: 'list_files', arguments: {} }, { name: 'bash', arguments: { command: 'cat hello.txt' } }] },
        { toolCalls: [{ name: 'write_file', arguments: { path: '../escape.txt', content: 'x' } }] },
        { text: 'done' },
      ][Math.min(callIndex, 3)]!,
    });
    try {
      expect(run.result).toMatchObject({ exitCode: 0, timedOut: false });
      expect(await readFile(join(run.sandbox.workspaceHostPath, 'hello.txt'), 'utf8')).toBe('hi');
      expect(run.records).toHaveLength(4);
      const third = run.records[3]!;
      const { tokenizer } = await import('@clawgym/core').then((m) => m.byteChatMl());
      expect(tokenizer.decode(third.promptIds)).toContain('error: path outside the workspace: ../escape.txt');
      // Each tool result is its own turn, as the harness sent it.
      expect(tokenizer.decode(third.promptIds)).toContain('<tool_response>\nhello.txt\n</tool_response><|im_end|>\n<|im_start|>user\n<tool_response>\nhi\n</tool_response>');
      expect(titoStats(run.records).rate).toBe(1);
    } finally {
      await run.close();
    }
  }, 60_000);

  it('exits 2 at the turn limit and 1 when the endpoint fails', async () => {
    const looping = await runHarnessOnce({
      harness: agentLoopHarness, options: { maxTurns: 2 }, instruction: 'loop', timeoutMs: 30_000,
      script: () => ({ toolCalls: [{ name: 'list_files', arguments: {} }] }),
    });
    try {
      expect(looping.result.exitCode).toBe(2);
    } finally {
      await looping.close();
    }
    const failing = await runHarnessOnce({ harness: agentLoopHarness, instruction: 'x', timeoutMs: 30_000, script: () => ({ failBefore: 'down' }) });
    try {
      expect(failing.result.exitCode).toBe(1);
      expect(failing.result.logTail).toContain('model endpoint answered 500');
    } finally {
      await failing.close();
    }
  }, 60_000);
});
