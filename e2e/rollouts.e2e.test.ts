import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bubblewrapPath, localSandboxProvider, RolloutRunner, titoStats, type Harness, type RolloutJob, type SandboxProvider, type Task } from '@clawgym/core';
import { describeIf, HARNESS_DIR, installedHarness, startScriptedProxy } from '@clawgym/core/testing';
import { claudeCodeHarness } from '@clawgym/harness-claude-code';
import { openClawHarness } from '@clawgym/harness-openclaw';
import { agentLoopHarness, AGENTLOOP_BIN } from '@clawgym/harness-agentloop';
import { dockerSandboxProvider } from '@clawgym/sandbox-docker';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from '@clawgym/sandbox-docker/testing';

// Real rollouts end to end, as a run makes them: real harness CLIs in real sandboxes, the
// scripted engine behind the proxy, verification of each task's file, every call recorded.

const claude = installedHarness('claude-code');
const openclaw = installedHarness('openclaw');
const missing = 'missing' in claude ? claude.missing : 'missing' in openclaw ? openclaw.missing
  : !bubblewrapPath() ? 'bubblewrap is not installed (apt-get install bubblewrap)' : dockerdMissing();

/** "Create <name>.txt containing <word>" with a verifier that reads it. */
const fileTask = (i: number): Task => ({
  id: `file-${i}`, category: 'files', instruction: `Create note${i}.txt containing word${i}`,
  setup: async () => {},
  verify: async (ws) => {
    const ok = (await ws.exists(`note${i}.txt`)) && (await ws.readFile(`note${i}.txt`)).toString() === `word${i}`;
    return { reward: ok ? 1 : 0, pass: ok, details: ok ? 'file correct' : 'file missing or wrong' };
  },
});

describeIf(missing, 'real rollouts: Claude Code and OpenClaw in bubblewrap, agentloop in Docker', () => {
  let p: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  let dockerd: PrivateDockerd | undefined;
  let docker: SandboxProvider;

  beforeAll(async () => {
    // Each rollout's script writes the file its task asks for: the task number is in the session id.
    p = await startScriptedProxy(({ sessionId, callIndex }) => {
      const i = Number(/(\d+)$/.exec(sessionId.replace(/\.retry\d+$/, ''))![1]);
      if (callIndex > 0) return { text: 'done' };
      if (sessionId.startsWith('cc-')) return { toolCalls: [{ name: 'Write', arguments: { file_path: `/workspace/note${i}.txt`, content: `word${i}` } }] };
      if (sessionId.startsWith('oc-')) return { toolCalls: [{ name: 'write', arguments: { path: `note${i}.txt`, content: `word${i}` } }] };
      return { toolCalls: [{ name: 'write_file', arguments: { path: `note${i}.txt`, content: `word${i}` } }] };
    });
    socketPath = join(mkdtempSync(join(tmpdir(), 'e2e-sock-')), 'proxy.sock');
    await p.proxy.listenUnix(socketPath);
    dockerd = await startDockerd();
    const image = await buildSandboxImage(dockerd.dockerHost);
    docker = dockerSandboxProvider({ socketPath: dockerd.socketPath, image });
  }, 240_000);
  afterAll(async () => {
    try {
      await p?.close();
      await dockerd?.stop();
    } finally {
      // Only once made: dirname('') is '.', the repository.
      if (socketPath) await rm(dirname(socketPath), { recursive: true, force: true });
    }
  });

  const runAll = async (sandboxes: SandboxProvider, harness: Harness, prefix: string, n: number, options: Record<string, unknown>, readOnlyPaths: string[], timeoutMs: number) => {
    const runner = new RolloutRunner({ runId: `e2e-${prefix}`, proxy: p.proxy, socketPath, sandboxes, concurrency: n, timeoutMs, infraRetries: 0, readOnlyPaths });
    const jobs: RolloutJob[] = Array.from({ length: n }, (_, i) => ({ rolloutId: `${prefix}-${i}`, step: 1, task: fileTask(i), harness, harnessOptions: options }));
    const reports = await runner.run(jobs);
    for (const r of reports) {
      expect({ id: r.rolloutId, outcome: r.outcome, reward: r.reward, details: r.details }).toEqual({ id: r.rolloutId, outcome: 'ok', reward: 1, details: 'file correct' });
      expect(r.records.length).toBeGreaterThanOrEqual(2);
      expect(titoStats(r.records).rate).toBe(1);
    }
    expect(reports).toHaveLength(n);
    return reports;
  };

  it('8 concurrent Claude Code rollouts in bubblewrap sandboxes', async () => {
    await runAll(localSandboxProvider(), claudeCodeHarness, 'cc', 8, { bin: (claude as { bin: string }).bin }, [join(HARNESS_DIR, 'claude-code')], 120_000);
  }, 240_000);

  it('2 OpenClaw rollouts in bubblewrap sandboxes', async () => {
    const oc = openclaw as { bin: string; node: string };
    await runAll(localSandboxProvider(), openClawHarness, 'oc', 2, { node: oc.node, entry: oc.bin }, [join(HARNESS_DIR, 'openclaw'), join(HARNESS_DIR, 'node24')], 180_000);
  }, 300_000);

  it('4 agentloop rollouts in Docker sandboxes', async () => {
    await runAll(docker, agentLoopHarness, 'al', 4, { node: 'node', bin: AGENTLOOP_BIN }, [dirname(AGENTLOOP_BIN)], 60_000);
  }, 180_000);
});


