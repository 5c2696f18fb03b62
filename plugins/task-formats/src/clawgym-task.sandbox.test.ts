/**
 * ClawGym-Task tasks graded as ClawGym-RL grades them (RL/clawgym_rl_rollout.py of
 * ClawGym/ClawGym-Agents at 0e8526d8: _prepare_workspace, _copy_reward_assets_to_container,
 * _write_reward_payload, _run_reward, _parse_reward_stdout), in real bubblewrap sandboxes: real
 * sample tasks from ../shared/data/clawgym-task-sample and small tasks made here for the
 * payload and the faults.
 */
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fsWorkspace, localSandboxProvider, type CanonicalMessage, type Sandbox, type Task } from '@clawgym/core';
import { bubblewrapMissing, describeIf } from '@clawgym/core/testing';
import { loadClawGymBench, loadClawGymBenchTask, OPENCLAW_WORKSPACE, PAYLOAD_FILE } from './index';

/** The sample of ClawGym-Task (see its SOURCE.md); CLAWGYM_TASK_SAMPLE names another copy. */
export const SAMPLE = resolve(process.env.CLAWGYM_TASK_SAMPLE ?? join(__dirname, '..', '..', '..', '..', 'shared', 'data', 'clawgym-task-sample'));
const sampleMissing = existsSync(join(SAMPLE, 'task_0000')) ? undefined : `the ClawGym-Task sample is not at ${SAMPLE} (set CLAWGYM_TASK_SAMPLE)`;

/** A task folder in ClawGym-RL's layout, made in `root`. */
function makeTask(root: string, name: string, files: Record<string, string>, entry: Record<string, unknown> = {}): string {
  const dir = join(root, name);
  const all: Record<string, string> = {
    'data_entry.json': JSON.stringify({ task_id: name, user_query: `do ${name}`, metadata: { category: '', grading_type: 'automated' }, ...entry }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** reward.sh as every ClawGym-Task task ships it: check.py's sub-scores, averaged on the last line. */
const REWARD_SH = `#!/usr/bin/env bash
set -euo pipefail

python3 /root/.openclaw/workspace/reward/check.py /root/.openclaw/workspace | python3 -c 'import json, sys; raw = sys.stdin.read().strip(); data = json.loads(raw); print(sum(float(v) for v in data.values()) / len(data) if isinstance(data, dict) and data else float(data) if isinstance(data, (int, float)) else 0.0)'
`;

describeIf(bubblewrapMissing(), 'ClawGym-Task graded as ClawGym-RL grades it (bubblewrap)', () => {
  let root: string;
  let sockDir: string;
  let socketPath: string;
  let provider: ReturnType<typeof localSandboxProvider>;
  let server: Server;
  let n = 0;
  const open: Sandbox[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'clawgym-task-'));
    sockDir = mkdtempSync(join(tmpdir(), 'clawgym-task-sock-'));
    socketPath = join(sockDir, 'model.sock');
    provider = localSandboxProvider({ root: join(root, 'sandboxes'), log: () => {} });
    server = createServer((c) => c.destroy());
    await new Promise<void>((r) => server.listen(socketPath, r));
  });
  afterAll(async () => {
    for (const sb of open) await sb.destroy();
    await provider?.close();
    if (server) await new Promise<void>((r) => server.close(() => r()));
    if (root) await rm(root, { recursive: true, force: true });
    if (sockDir) await rm(sockDir, { recursive: true, force: true });
  });

  async function prepared(task: Task) {
    const sb = await provider.create({
      runId: 'cgt', rolloutId: `r${++n}`, limits: { wallMs: 120_000 }, modelEndpoint: { socketPath, url: 'http://127.0.0.1:9/unused' },
      ...(task.workspacePath ? { workspacePath: task.workspacePath } : {}),
    });
    open.push(sb);
    const ws = fsWorkspace(sb.workspaceHostPath);
    await task.setup(ws);
    return { sb, ws };
  }

  describeIf(sampleMissing, 'sample tasks', () => {
    it('puts the inputs at input_mount_dir, where the agent works, and keeps reward/ out until the agent ended', async () => {
      const task = await loadClawGymBenchTask(join(SAMPLE, 'task_0000'));
      expect(task.workspacePath).toBe(OPENCLAW_WORKSPACE);
      const { sb } = await prepared(task);
      const seen = await sb.exec(['sh', '-c', 'pwd; ls input; ls reward 2>&1 || true']);
      expect(seen.stdout.split('\n')).toEqual([OPENCLAW_WORKSPACE, 'contacts.csv', 'incidents.csv', expect.stringContaining('No such file or directory'), '']);
    }, 60_000);

    it("replaces whatever the agent wrote under reward/ with the task's own before reward.sh runs", async () => {
      const task = await loadClawGymBenchTask(join(SAMPLE, 'task_0000'));
      const { sb, ws } = await prepared(task);
      // An agent that forged a perfect score, in both files reward.sh may run.
      const forged = await sb.exec(['sh', '-c', 'mkdir -p reward && printf "echo 1\\n" > reward/reward.sh && printf "print(1)\\n" > reward/check.py && echo x > reward/planted.txt']);
      expect(forged.exitCode).toBe(0);
      const v = await task.verify(ws, { sandbox: sb, finalMessage: 'done' });
      expect(v.reward).toBeLessThan(1);
      expect(v.details).toMatch(/^score 0(\.\d+)? from reward\/reward\.sh/);
      expect(readFileSync(join(ws.root, 'reward', 'check.py'), 'utf8')).toBe(readFileSync(join(SAMPLE, 'task_0000', 'reward', 'check.py'), 'utf8'));
      expect(existsSync(join(ws.root, 'reward', 'planted.txt'))).toBe(false);
    }, 60_000);

    it('gives a task without input_mount_dir an empty workspace at the same path', async () => {
      const task = await loadClawGymBenchTask(join(SAMPLE, 'task_0176'));
      expect(task.entry.input_mount_dir).toBeUndefined();
      const { sb } = await prepared(task);
      expect(await sb.exec(['sh', '-c', 'pwd; ls -A'])).toMatchObject({ exitCode: 0, stdout: `${OPENCLAW_WORKSPACE}\n` });
    }, 60_000);
  });

  it('writes the payload (final message, metadata, transcript) and names it in OPENCLAW_REWARD_PAYLOAD', async () => {
    const check = `import json, os, sys
p = json.load(open(os.environ["OPENCLAW_REWARD_PAYLOAD"]))
users = [e["message"]["content"][0]["text"] for e in p["transcript"] if e.get("type") == "message" and e["message"]["role"] == "user"]
print(json.dumps({
    "path": float(os.environ["OPENCLAW_REWARD_PAYLOAD"] == sys.argv[1] + "/${PAYLOAD_FILE}"),
    "final": float(p["final_message"] == "The answer is 42."),
    "meta": float(p["metadata"] == {"category": "", "grading_type": "automated"}),
    "transcript": float(users == ["do payload"]),
}))
`;
    const dir = makeTask(root, 'payload', { 'reward/reward.sh': REWARD_SH, 'reward/check.py': check });
    const task = await loadClawGymBenchTask(dir);
    const conversation: CanonicalMessage[] = [
      { role: 'system', parts: [{ type: 'text', text: 'You are an agent.' }] },
      { role: 'user', parts: [{ type: 'text', text: 'do payload' }] },
      { role: 'assistant', parts: [{ type: 'text', text: 'The answer is 42.' }] },
    ];
    const full = await prepared(task);
    expect(await task.verify(full.ws, { sandbox: full.sb, finalMessage: 'The answer is 42.', conversation })).toMatchObject({ reward: 1, pass: true });
    const bare = await prepared(task);
    expect(await task.verify(bare.ws, { sandbox: bare.sb })).toMatchObject({ reward: 0.5, pass: false });
  }, 60_000);

  it('puts input files under a sub-folder that input_mount_dir names', async () => {
    const dir = makeTask(root, 'sub', { 'input_files/data.txt': 'x\n', 'reward/reward.sh': 'echo 1\n' }, { input_mount_dir: `${OPENCLAW_WORKSPACE}/data` });
    const task = await loadClawGymBenchTask(dir);
    const { sb } = await prepared(task);
    expect(await sb.exec(['cat', `${OPENCLAW_WORKSPACE}/data/data.txt`])).toMatchObject({ exitCode: 0, stdout: 'x\n' });
  }, 60_000);

  const faults: [string, Record<string, string>, RegExp[]][] = [
    ['a crash in check.py', { 'reward/reward.sh': REWARD_SH, 'reward/check.py': 'import sys\nprint(1 / 0)\n' }, [/reward\/reward\.sh exited with status 1/, /ZeroDivisionError/]],
    ['a missing interpreter', { 'reward/reward.sh': 'python9 /root/.openclaw/workspace/reward/check.py\n' }, [/exited with status 127/, /python9: command not found/]],
    ['no number on the last line', { 'reward/reward.sh': 'echo 0.5\necho "score: high"\n' }, [/printed "score: high" on its last line, which is not a number/]],
    ['nothing printed', { 'reward/reward.sh': 'echo oops >&2\n' }, [/printed nothing on stdout/, /oops/]],
    ['a NaN', { 'reward/reward.sh': 'echo nan\n' }, [/printed nan as the score/]],
  ];
  for (const [what, files, messages] of faults) {
    it(`counts ${what} as a verifier fault with the script's output, never as reward 0`, async () => {
      const task = await loadClawGymBenchTask(makeTask(root, `fault${++n}`, files));
      const { sb, ws } = await prepared(task);
      const err = await task.verify(ws, { sandbox: sb }).then(() => undefined, (e: unknown) => e);
      expect(err).toMatchObject({ code: 'CLAWGYM_VERIFIER_FAILED' });
      for (const m of messages) expect((err as Error).message).toMatch(m);
    }, 60_000);
  }

  it('reads the last non-empty line with Python float() rules, and clamps a score above 1', async () => {
    const spelled = await loadClawGymBenchTask(makeTask(root, 'spelled', { 'reward/reward.sh': 'echo "checking"\necho " 7_5e-3 "\necho\necho "   "\n' }));
    const a = await prepared(spelled);
    expect(await spelled.verify(a.ws, { sandbox: a.sb })).toMatchObject({ reward: 0.075, pass: false });
    const big = await loadClawGymBenchTask(makeTask(root, 'big', { 'reward/reward.sh': 'echo 2\n' }));
    const b = await prepared(big);
    const v = await big.verify(b.ws, { sandbox: b.sb });
    expect(v).toMatchObject({ reward: 1, pass: true });
    expect(v.details).toContain('2 clamped to [0, 1]');
  }, 60_000);

  it('loads a folder of tasks (files beside them ignored) with every broken task reported by itself', async () => {
    const folder = join(root, 'folder');
    makeTask(folder, 'good', { 'reward/reward.sh': 'echo 1\n' });
    makeTask(folder, 'no-reward', {});
    makeTask(folder, 'outside', { 'input_files/a.txt': 'a', 'reward/reward.sh': 'echo 1\n' }, { input_mount_dir: '/workspace' });
    makeTask(folder, 'no-inputs', { 'reward/reward.sh': 'echo 1\n' }, { input_mount_dir: OPENCLAW_WORKSPACE });
    makeTask(folder, 'bad-json', { 'reward/reward.sh': 'echo 1\n' });
    writeFileSync(join(folder, 'bad-json', 'data_entry.json'), '{');
    writeFileSync(join(folder, 'README.md'), 'not a task');
    const logs: string[] = [];
    const tasks = await loadClawGymBench(folder, { log: (m) => logs.push(m) });
    expect(tasks.map((t) => t.id)).toEqual(['good']);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('4 of 5 ClawGym-Bench task(s)');
    for (const [name, why] of [['no-reward', 'no reward/reward.sh'], ['outside', 'is outside /root/.openclaw/workspace'], ['no-inputs', 'input_files/ is missing'], ['bad-json', 'is not valid JSON']]) {
      expect(logs[0]).toContain(`${join(folder, name!)}: `);
      expect(logs[0]).toContain(why);
    }
    await expect(loadClawGymBench(folder, { strict: true })).rejects.toMatchObject({ code: 'CLAWGYM_TASK_INVALID' });
  });
});
