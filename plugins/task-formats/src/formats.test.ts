import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, isClawGymError, oracleOf, type OracleTurn } from '@clawgym/core';
import { createTestKernel, recordingSandbox, type RecordingSandbox } from '@clawgym/core/testing';
import taskFormats, { clawgymBench, harbor, workdirOf, loadClawGymBench, loadHarbor, parseHarborToml, parseRewardJson, parseScore, rewriteHarborPaths } from './index';

const FIX = join(__dirname, '__fixtures__');
const dirs: string[] = [];
const sandboxes: RecordingSandbox[] = [];
const workspace = () => { const d = mkdtempSync(join(tmpdir(), 'formats-')); dirs.push(d); return fsWorkspace(d); };
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const sb of sandboxes) await sb.destroy();
});

describe('Harbor loader', () => {
  it('reads instruction, task.toml metadata and timeouts, and the oracle', async () => {
    const [greet, sum] = await loadHarbor(join(FIX, 'harbor'));
    expect(greet).toMatchObject({
      id: 'fix-greeting', category: 'debugging', difficulty: 1, timeLimitMs: 120_000, format: 'harbor',
      config: { difficulty: 'easy', tags: ['bash', 'strings'], verifierTimeoutMs: 30_000, verifierEnv: { GREETING_STYLE: 'plain' } },
    });
    expect(greet!.instruction).toMatch(/^# Fix the greeting script/);
    // solve.sh runs under bash even where the tool call's shell is sh (see formats.sandbox.test.ts).
    expect(greet!.oracle).toEqual([{ toolCalls: [{ name: 'bash', arguments: { command: expect.stringMatching(/^bash -c /) } }] }]);
    expect(String((greet!.oracle as OracleTurn[])[0]!.toolCalls[0]!.arguments.command)).toContain(greet!.solveScript!);
    expect(sum).toMatchObject({ id: 'sum-csv', category: 'data-processing', difficulty: 2, timeLimitMs: 300_000 });
    expect((await loadHarbor(join(FIX, 'harbor', 'sum-csv'))).map((t) => t.id)).toEqual(['sum-csv']);
  });

  it("with environment: 'copy', copies environment/ into the workspace, without Docker files, tests or solution", async () => {
    const [greet] = await loadHarbor(join(FIX, 'harbor'), { environment: 'copy' });
    expect(greet!.environment).toBeUndefined();
    // The files go where the image would have had them: its WORKDIR is the workspace's path.
    expect(greet!.workspacePath).toBe('/app');
    const ws = workspace();
    await greet!.setup(ws);
    expect(await ws.list()).toEqual(['greet.sh']);
  });

  it("reads the workspace path from the Dockerfile's WORKDIR (relative ones resolved), none when it cannot be known", async () => {
    const d = workspace().root;
    const at = async (text: string) => { writeFileSync(join(d, 'Dockerfile'), text); return workdirOf(join(d, 'Dockerfile')); };
    expect(await at('FROM x\nWORKDIR /srv\nWORKDIR app\n')).toBe('/srv/app');
    expect(await at('FROM x\nWORKDIR $HOME/app\n')).toBeUndefined();
    expect(await at('FROM x\nWORKDIR /\n')).toBeUndefined();
    expect(await at('FROM x\nWORKDIR /usr/src/app\n')).toBeUndefined(); // a system folder: the sandbox refuses it
    expect(await at('FROM x\n')).toBeUndefined();
  });

  it('parses task.toml defensively and rewrites Harbor container paths in test.sh', async () => {
    expect(await parseHarborToml('', 'x')).toEqual({ tags: [], verifierTimeoutMs: 600_000, verifierEnv: {}, environment: {} });
    await expect(parseHarborToml('[metadata\n', 'bad.toml')).rejects.toMatchObject({ code: 'CLAWGYM_TASK_INVALID', message: expect.stringContaining('bad.toml:1:10: not valid TOML') });
    const out = rewriteHarborPaths('cd /tests && pytest /tests/test_x.py; echo 1 > /logs/verifier/reward.txt; ls ./tests $HOME/tests /testsuite /logs/verifier2', { rewardDir: '/h/r', testsDir: '/h/t' });
    expect(out).toBe('cd /h/t && pytest /h/t/test_x.py; echo 1 > /h/r/reward.txt; ls ./tests $HOME/tests /testsuite /logs/verifier2');
  });

  it('fails clearly on a folder that is not a task', async () => {
    await expect(loadHarbor(join(FIX, 'clawgym-bench'))).rejects.toMatchObject({ code: 'CLAWGYM_CONFIG_INVALID', message: expect.stringContaining('no Harbor tasks') });
  });
});

describe('ClawGym-Bench loader', () => {
  it('reads user_query, metadata.category and the id, and copies input_files/', async () => {
    const tasks = await loadClawGymBench(join(FIX, 'clawgym-bench'));
    expect(tasks.map((t) => [t.id, t.category])).toEqual([['rename-photos', 'file-management'], ['cgb-word-count', 'text-processing']]);
    expect(tasks[1]!.instruction).toBe('How many words does report.txt contain? Write just the number to word_count.txt.');
    const ws = workspace();
    await tasks[0]!.setup(ws);
    expect(await ws.list()).toEqual(['photos']);
    expect(await ws.list('photos')).toEqual(['IMG_001.JPG', 'IMG_002.JPG', 'IMG_003.JPG', 'IMG_004.JPG']);
    expect((await oracleOf(tasks[0]!))?.[0]?.toolCalls[0]?.name).toBe('bash');
  });

  it('loads a folder of links to task folders (a split made of links) as it loads the tasks themselves', async () => {
    const split = mkdtempSync(join(tmpdir(), 'formats-links-'));
    dirs.push(split);
    for (const name of ['rename-photos', 'word-count']) symlinkSync(join(FIX, 'clawgym-bench', name), join(split, name));
    symlinkSync(join(FIX, 'clawgym-bench', 'word-count', 'data_entry.json'), join(split, 'not-a-task.json'));
    const tasks = await loadClawGymBench(split);
    expect(tasks.map((t) => t.id)).toEqual((await loadClawGymBench(join(FIX, 'clawgym-bench'))).map((t) => t.id));
  });
});

describe('ClawGym-Task folders at scale', () => {
  it('load thousands of tasks without reading their inputs, each broken one reported by itself', async () => {
    const root = workspace().root;
    const broken = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const dir = join(root, `task_${String(i).padStart(4, '0')}`);
      mkdirSync(join(dir, 'reward'), { recursive: true });
      mkdirSync(join(dir, 'input_files', 'input'), { recursive: true });
      writeFileSync(join(dir, 'data_entry.json'), JSON.stringify({ task_id: `task_${i}`, user_query: `q${i}`, input_mount_dir: '/root/.openclaw/workspace', metadata: { category: '', grading_type: 'automated' } }));
      if (i % 97 === 5) { broken.add(i); continue; } // no reward/reward.sh
      writeFileSync(join(dir, 'reward', 'reward.sh'), 'echo 1\n');
    }
    // An input that would block whoever read it: loading must not copy inputs up front.
    execFileSync('mkfifo', [join(root, 'task_0000', 'input_files', 'input', 'pipe')]);
    const logs: string[] = [];
    const tasks = await loadClawGymBench(root, { log: (m) => logs.push(m) });
    expect(tasks).toHaveLength(2000 - broken.size);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain(`${broken.size} of 2000 ClawGym-Bench task(s)`);
    for (const i of broken) expect(logs[0]).toContain(`${join(root, `task_${String(i).padStart(4, '0')}`)}: no reward/reward.sh`);
  }, 60_000);
});

describe('script verifiers', () => {
  it('refuse to verify without a sandbox, with a ClawGymError that says why', async () => {
    for (const task of [...await loadHarbor(join(FIX, 'harbor')), ...await loadClawGymBench(join(FIX, 'clawgym-bench'))]) {
      const err = await task.verify(workspace()).catch((e: unknown) => e);
      expect(isClawGymError(err)).toBe(true);
      expect((err as Error).message).toContain(`task ${task.id} is verified by a script inside the rollout's sandbox`);
    }
  });

  it('copy the tests in at verify time, under HOME, and run them from the workspace with REWARD_DIR', async () => {
    const sb = recordingSandbox((argv) => (argv[0] === 'cat' && argv[2]!.endsWith('/logs/verifier/reward.txt') ? { stdout: '1\n' } : argv[0] === 'cat' ? { exitCode: 1 } : {}));
    sandboxes.push(sb);
    const copies: string[][] = [];
    sb.copyIn = async (host, inside) => { copies.push([host, inside]); };
    const [greet] = await loadHarbor(join(FIX, 'harbor'));
    const v = await greet!.verify(workspace(), { sandbox: sb });
    expect(v).toMatchObject({ reward: 1, pass: true });
    expect(v.details).toContain('reward 1 from /home/agent/.clawgym-verifier/logs/verifier/reward.txt (tests/test.sh exit 0)');
    expect(copies).toEqual([[join(FIX, 'harbor', 'fix-greeting', 'tests'), '/home/agent/.clawgym-verifier/tests']]);
    const run = sb.execs.find((e) => e.argv[0] === 'bash')!;
    expect(run.argv).toEqual(['bash', '/home/agent/.clawgym-verifier/tests/test.sh']);
    expect(run.options).toMatchObject({ cwd: '/workspace', timeoutMs: 30_000, env: { REWARD_DIR: '/home/agent/.clawgym-verifier/logs/verifier', GREETING_STYLE: 'plain' } });
    expect(sb.files.get('/home/agent/.clawgym-verifier/tests/test.sh')).toContain('cat /home/agent/.clawgym-verifier/tests/expected.txt');
    // The stale reward files and the hidden folder are wiped before anything runs.
    expect(sb.execs[0]!.argv.slice(-2)).toEqual(['reward.txt', 'reward.json']);
    expect(sb.execs[1]!.argv).toEqual(['rm', '-rf', '/home/agent/.clawgym-verifier']);
  });

  it('read scores and reward.json defensively', () => {
    expect(parseScore(' 0.25\n')).toEqual({ reward: 0.25 });
    expect(parseScore('7')).toEqual({ reward: 1, note: '7 clamped to [0, 1]' });
    expect(parseScore('PASS')).toEqual({ error: '"PASS" is not a number' });
    expect(parseRewardJson('{"reward": 0.5, "note": "x"}')).toEqual({ reward: 0.5 });
    expect(parseRewardJson('{"accuracy": 1}')).toEqual({ reward: 1 });
    expect(parseRewardJson('{"a": 1, "b": 0}')).toEqual({ error: 'has no numeric "reward" field (keys: a, b)' });
    expect(parseRewardJson('nope')).toEqual({ error: 'is not valid JSON' });
  });
});

describe('task-formats plugin', () => {
  it('registers one suite per configured folder and nothing by default', async () => {
    const none = await createTestKernel({ plugins: [taskFormats()] });
    expect(none.registry.has('taskSuite', 'harbor:harbor')).toBe(false);
    const kernel = await createTestKernel({ plugins: [taskFormats({ harbor: [join(FIX, 'harbor')], clawgymBench: [join(FIX, 'clawgym-bench')] })] });
    const h = kernel.registry.get('taskSuite', 'harbor:harbor');
    const c = kernel.registry.get('taskSuite', 'clawgym-bench:clawgym-bench');
    const all = async (s: typeof h) => [...await s.tasks('train', { seed: 0 }), ...await s.tasks('test', { seed: 0 })].map((t) => t.id).sort();
    expect(await all(h)).toEqual(['fix-greeting', 'sum-csv']);
    expect(await all(c)).toEqual(['cgb-word-count', 'rename-photos']);
  });

  it('splits by listed ids', async () => {
    expect((await harbor(join(FIX, 'harbor'), { testIds: ['sum-csv'] }).tasks('test', { seed: 1 })).map((t) => t.id)).toEqual(['sum-csv']);
    expect((await clawgymBench(join(FIX, 'clawgym-bench'), { testIds: [] }).tasks('train', { seed: 1, limit: 1 }))).toHaveLength(1);
  });
});
