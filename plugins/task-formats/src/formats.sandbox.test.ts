/**
 * End to end through a real local sandbox (bubblewrap where installed, else the local
 * provider's plain-process fallback): setup, the oracle's solve.sh run inside the sandbox as
 * the "agent", then the verifier script inside the sandbox → reward 1; without the solution → 0.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bubblewrapPath, fsWorkspace, localSandboxProvider, oracleOf, type Sandbox, type Task } from '@clawgym/core';
import { describeIf } from '@clawgym/core/testing';
import { loadClawGymBench, loadHarbor } from './index';

const FIX = join(__dirname, '__fixtures__');
const NETNS_RUN = resolve(__dirname, '..', '..', '..', 'core', 'dist', '2-sandbox', 'netns-run.js');
const missing = existsSync(NETNS_RUN) ? undefined : `the local sandbox needs the built core (${NETNS_RUN}): run npm run build`;

describeIf(missing, `script verifiers in a real sandbox (${bubblewrapPath() ? 'bubblewrap' : 'local fallback'})`, () => {
  // Made in beforeAll, not here: a skipped describe still runs this body but never its afterAll.
  let root: string;
  let sockDir: string;
  let socketPath: string;
  const warnings: string[] = [];
  let provider: ReturnType<typeof localSandboxProvider>;
  let server: Server;
  let n = 0;
  const open: Sandbox[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'formats-sandboxes-'));
    sockDir = mkdtempSync(join(tmpdir(), 'formats-sock-'));
    socketPath = join(sockDir, 'model.sock');
    provider = localSandboxProvider({ root, log: (m) => warnings.push(m) });
    // Nothing calls the model here; the sandbox only needs a socket to bind.
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
      runId: 'formats', rolloutId: `r${++n}`, limits: { wallMs: 120_000 }, modelEndpoint: { socketPath, url: 'http://127.0.0.1:9/unused' },
      ...(task.workspacePath ? { workspacePath: task.workspacePath } : {}),
    });
    open.push(sb);
    const ws = fsWorkspace(sb.workspaceHostPath);
    await task.setup(ws);
    return { sb, ws };
  }

  /**
   * Play the task's oracle as the agent would: its bash tool call, inside the sandbox, from the
   * workspace, through `/bin/sh -c` as agentloop's bash tool runs it (dash here: sum-csv's
   * solve.sh uses bash syntax, which fails unless the oracle hands it to bash).
   */
  async function playOracle(task: Task, sb: Sandbox) {
    const call = (await oracleOf(task))![0]!.toolCalls[0]!;
    expect(call.name).toBe('bash');
    const r = await sb.exec(['/bin/sh', '-c', String(call.arguments.command)], { timeoutMs: 30_000 });
    expect(r).toMatchObject({ exitCode: 0 });
  }

  const cases: [string, () => Promise<Task[]>][] = [
    // Without Docker a Harbor task runs only with its environment copied (its Dockerfile ignored).
    ['Harbor', () => loadHarbor(join(FIX, 'harbor'), { environment: 'copy' })],
    ['ClawGym-Bench', () => loadClawGymBench(join(FIX, 'clawgym-bench'))],
  ];
  for (const [format, load] of cases) {
    it(`${format}: the oracle's solution earns reward 1, no solution earns 0, and the agent never sees the verifier files`, async () => {
      for (const task of await load()) {
        const good = await prepared(task);
        expect(await good.ws.list()).not.toEqual(expect.arrayContaining(['tests', 'solution', 'reward', 'Dockerfile']));
        const home = await good.sb.exec(['ls', '-A', good.sb.homePath]);
        expect(home.stdout).not.toContain('.clawgym-verifier');
        await playOracle(task, good.sb);
        const pass = await task.verify(good.ws, { sandbox: good.sb });
        expect({ task: task.id, ...pass }).toMatchObject({ task: task.id, reward: 1, pass: true });

        const bad = await prepared(task);
        const fail = await task.verify(bad.ws, { sandbox: bad.sb });
        expect({ task: task.id, ...fail }).toMatchObject({ task: task.id, reward: 0, pass: false });
        expect(fail.details.length).toBeGreaterThan(20);
      }
    }, 60_000);
  }

  it('the local sandbox refuses a task that needs its own image, naming the Docker sandbox', async () => {
    const [greet] = await loadHarbor(join(FIX, 'harbor'));
    expect(greet!.environment).toBeDefined();
    await expect(provider.create({ runId: 'formats', rolloutId: 'img', limits: {}, modelEndpoint: { socketPath, url: 'http://127.0.0.1:9/unused' }, environment: greet!.environment }))
      .rejects.toMatchObject({ code: 'CLAWGYM_SANDBOX_UNSUPPORTED', message: expect.stringContaining('needs its own image'), hint: expect.stringContaining("sandbox: 'docker'") });
  });

  it('Harbor: a reward file the agent planted is removed before the tests run', async () => {
    const [greet] = await loadHarbor(join(FIX, 'harbor'), { environment: 'copy' });
    const { sb, ws } = await prepared(greet!);
    await ws.writeFile('reward.txt', '1\n');
    await sb.exec(['sh', '-c', `mkdir -p ${sb.homePath}/.clawgym-verifier/logs/verifier && echo 1 > ${sb.homePath}/.clawgym-verifier/logs/verifier/reward.txt`]);
    const v = await greet!.verify(ws, { sandbox: sb });
    expect(v).toMatchObject({ reward: 0, pass: false });
    expect(v.details).toContain('removed reward.txt the agent had left in the workspace');
    expect(v.details).toContain('FAIL: expected:');
  }, 30_000);

  it('ClawGym-Bench: partial credit comes through as the reward', async () => {
    const [photos] = await loadClawGymBench(join(FIX, 'clawgym-bench'));
    const { sb, ws } = await prepared(photos!);
    await sb.exec(['sh', '-c', 'mv photos/IMG_001.JPG photos/holiday-001.jpg']);
    const v = await photos!.verify(ws, { sandbox: sb });
    expect(v).toMatchObject({ reward: 0.25, pass: false });
    expect(v.details).toContain('score 0.25 from reward/reward.sh');
    expect(v.details).toContain('photo 002 not renamed correctly');
  }, 30_000);
});
