import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapMissing, describeIf, expectHarnessRollout, harnessE2ePrerequisites, runHarnessOnce } from '@clawgym/core/testing';
import { cacheIsWarm, copilotHarness, defaultCacheDir, warmCache } from './index';

const { cli, missing } = harnessE2ePrerequisites('copilot');
// The shared cache is the default one beside the installed CLI (node_modules/.cache/copilot):
// the first rollout of a process unpacks it on the host if the installer has not.
const options = () => ({ bin: 'bin' in cli ? cli.bin : '' });

describeIf(missing, 'real GitHub Copilot CLI through the proxy (e2e, OpenAI Chat)', () => {
  it('writes the file the script asks for; no side call; every later main call reuses the previous ids', async () => {
    const run = await runHarnessOnce({
      harness: copilotHarness,
      rolloutId: 'copilot',
      options: options(),
      instruction: 'Create hello.txt containing hi',
      timeoutMs: 240_000,
      script: ({ prompt, workspace }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : { text: 'Writing the file.', toolCalls: [{ name: 'create', arguments: { path: join(workspace, 'hello.txt'), file_text: 'hi' } }] }),
    });
    try {
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', mainCalls: 2, sideRoles: {} });
      // It ran from the shared cache: nothing was unpacked into the rollout's HOME.
      expect(existsSync(join(run.sandbox.homePath, '.cache', 'copilot', 'pkg'))).toBe(false);
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing, 'a GitHub Copilot CLI subagent through the proxy (e2e)', () => {
  it('the task tool\'s subagent call is classified subagent and stays out of the main tree; the main agent reuses its ids', async () => {
    const run = await runHarnessOnce({
      harness: copilotHarness,
      rolloutId: 'copilot-subagent',
      options: options(),
      instruction: 'Ask a subagent to look around, then say done',
      timeoutMs: 240_000,
      script: ({ prompt }) => (/<tool_response>/.test(prompt) ? { text: 'done' }
        : /Look around the workspace and report/.test(prompt) ? { text: 'nothing to report' }
          : { toolCalls: [{ name: 'task', arguments: { name: 'looker', description: 'Look around', prompt: 'Look around the workspace and report.', agent_type: 'general-purpose', mode: 'sync' } }] }),
    });
    try {
      // Unclassified, the subagent's call (the same tools as the agent) would count as a main fork.
      await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, mainCalls: 2, sideRoles: { subagent: 1 } });
      expect(run.records.map((r) => r.role)).toEqual(['main', 'subagent', 'main']);
      expect(run.records.map((r) => r.lineage)).toEqual([{ id: 0, cause: 'root' }, { id: 1, cause: 'subagent' }, { id: 0, cause: 'root' }]);
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing, 'a GitHub Copilot CLI compaction through the proxy (e2e)', () => {
  it('near maxPromptTokens the summary request is classified compaction; the agent goes on from the summary, a line the compaction started', async () => {
    const run = await runHarnessOnce({
      harness: copilotHarness,
      rolloutId: 'copilot-compaction',
      // ~48k tokens of prompt and tools (byte-level ChatML) against the 16000 Copilot counts with its own
      // tokenizer: past the limit after a 14 kB tool result, it cuts the history and compacts.
      options: { ...options(), maxPromptTokens: 16_000 },
      instruction: 'Count to 3000',
      timeoutMs: 240_000,
      // The summary request quotes the history (the tool result included): test it first.
      script: ({ prompt }) => (/Please create a detailed summary of the conversation so far/.test(prompt) ? { text: '<overview>Count to 3000</overview>' }
        : /<tool_response>|has been summarized to free up context/.test(prompt) ? { text: 'done' }
          : { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 3000', description: 'Count' } }] }),
    });
    try {
      const tito = await expectHarnessRollout(run, { wireFormat: 'openai-chat', files: {}, sideRoles: { compaction: 1 }, wholeReuse: false });
      // The compaction runs in the background: the agent's re-send of its cut history comes before or after it.
      const compaction = run.records.findIndex((r) => r.role === 'compaction');
      const last = run.records.length - 1;
      expect(run.records[compaction]!.lineage).toEqual({ id: 1, cause: 'compaction' });
      expect(run.records[last]!.lineage).toEqual({ id: 2, cause: 'compaction', startedBy: compaction });
      const roots = run.records.filter((r) => r.lineage?.cause === 'root');
      expect(roots.length).toBeGreaterThan(0);
      expect(roots.map((r) => r.role).filter((role) => role !== 'main')).toEqual([]);
      // One fork, saying where: the call that goes on from the summary.
      expect(tito.forkReasons.map((f) => f.callIndex)).toEqual([last]);
    } finally {
      await run.close();
    }
  }, 300_000);
});

describeIf(missing ?? bubblewrapMissing(), 'the GitHub Copilot CLI\'s shared cache, read-only as in a sandbox (bubblewrap)', () => {
  it('runs from the warm cache bound read-only and writes nothing to HOME; from a read-only empty one it cannot start', async () => {
    const bin = 'bin' in cli ? cli.bin : '';
    expect(await warmCache(bin, defaultCacheDir(bin)!)).toBe(true);
    // bubblewrap binds a real path (the harness folder may be reached through a link).
    const cache = realpathSync(defaultCacheDir(bin)!);
    const home = mkdtempSync(join(tmpdir(), 'clawgym-copilot-home-'));
    const empty = mkdtempSync(join(tmpdir(), 'clawgym-copilot-empty-'));
    const version = (cacheDir: string) => spawnSync('bwrap', ['--bind', '/', '/', '--ro-bind', cacheDir, cacheDir, '--dev', '/dev', '--proc', '/proc',
      'env', '-i', 'PATH=/usr/bin:/bin', `HOME=${home}`, `COPILOT_CACHE_HOME=${cacheDir}`, 'COPILOT_AUTO_UPDATE=false', bin, '--version'], { encoding: 'utf8', timeout: 60_000 });
    try {
      const r = version(cache);
      expect({ status: r.status, stderr: r.stderr.slice(-500) }).toMatchObject({ status: 0 });
      expect(r.stdout).toMatch(/GitHub Copilot CLI \d+\.\d+\.\d+/);
      expect(existsSync(join(home, '.cache', 'copilot'))).toBe(false);
      // Why the harness warms the cache on the host first, and passes none it could not warm.
      const cold = version(empty);
      expect(cold.status).not.toBe(0);
      expect(cold.stderr).toMatch(/mkdir/);
      expect(cacheIsWarm(empty)).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
      rmSync(empty, { recursive: true, force: true });
    }
  }, 120_000);
});
