/**
 * Harbor tasks in their own image, on a private dockerd: the image is built from the task's
 * environment/Dockerfile (FROM the project's locally built base image: there is no registry
 * here), once per content hash, and the task's oracle passes only in it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, oracleOf, type Sandbox, type SandboxSpec, type Task } from '@clawgym/core';
import { describeIf } from '@clawgym/core/testing';
import { loadHarbor } from '@clawgym/task-formats';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from './testing';
import { DockerSandboxProvider } from './provider';
import { LABEL_TASK_HASH } from './task-image';
import { makeHarborTask as makeTask } from './harbor-fixture';

describeIf(dockerdMissing(), 'Harbor tasks in their own Docker image', () => {
  let dockerd: PrivateDockerd;
  let provider: DockerSandboxProvider;
  let base: string;
  let root: string;
  let socketPath: string;
  let server: Server;
  let logDir: string;
  let n = 0;

  beforeAll(async () => {
    dockerd = await startDockerd();
    base = await buildSandboxImage(dockerd.dockerHost);
    provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image: base });
    root = mkdtempSync(join(tmpdir(), 'harbor-image-'));
    logDir = join(root, 'run');
    socketPath = join(root, 'model.sock');
    // Nothing calls the model here; the sandbox only needs a socket to bind.
    server = createServer((c) => c.destroy());
    await new Promise<void>((r) => server.listen(socketPath, r));
  }, 300_000);

  afterAll(async () => {
    await provider?.close();
    await provider?.sweep('harbor-image').catch(() => {});
    if (server) await new Promise<void>((r) => server.close(() => r()));
    await dockerd?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  const spec = (task: Task): SandboxSpec => ({
    runId: 'harbor-image', rolloutId: `r${++n}`, limits: { wallMs: 120_000, ...task.limits }, environment: task.environment, logDir,
    modelEndpoint: { socketPath, url: 'http://127.0.0.1:9/unused' },
  });

  /** The oracle's bash tool call as agentloop runs it: `/bin/sh -c` in the workspace. */
  async function playOracle(task: Task, sb: Sandbox) {
    const command = String((await oracleOf(task))![0]!.toolCalls[0]!.arguments.command);
    return sb.exec(['/bin/sh', '-c', command], { timeoutMs: 30_000 });
  }

  async function rollout(task: Task, s: SandboxSpec, solve: boolean) {
    const sb = await provider.create(s);
    try {
      const ws = fsWorkspace(sb.workspaceHostPath);
      await task.setup(ws);
      const played = solve ? await playOracle(task, sb) : undefined;
      return { sb, played, verdict: await task.verify(ws, { sandbox: sb }), files: readdirSync(sb.workspaceHostPath).sort(), inspect: await provider.docker.getContainer(sb.id).inspect() };
    } finally {
      await sb.destroy();
    }
  }

  it("builds the image once per content hash, lays its WORKDIR into the workspace, applies [environment] limits, and the oracle passes in it", async () => {
    const [task] = await loadHarbor(makeTask(root, 'seeded', base));
    expect(task!.environment).toBeDefined();

    const t0 = Date.now();
    const good = await rollout(task!, spec(task!), true);
    const first = Date.now() - t0;
    expect(good.played).toMatchObject({ exitCode: 0 });
    expect(good.sb.workspacePath).toBe('/app');
    expect(good.files).toEqual(['data.txt', 'out.txt', 'seed.txt']);
    expect(good.verdict).toMatchObject({ reward: 1, pass: true });
    expect(good.inspect.HostConfig.NanoCpus).toBe(1e9);
    expect(good.inspect.HostConfig.Memory).toBe(256 * 1024 * 1024);

    // The build log is kept in the run's folder.
    const logs = readdirSync(join(logDir, 'images'));
    expect(logs).toHaveLength(1);
    const log = readFileSync(join(logDir, 'images', logs[0]!), 'utf8');
    expect(log).toMatch(/building clawgym-task:[0-9a-f]{16}/);
    expect(log).toContain('RUN mkdir -p /app');
    expect(log).toMatch(/built clawgym-task:\S+ in [\d.]+ s/);

    // Same content, no rebuild; a no-op agent in the same image fails.
    const t1 = Date.now();
    const noop = await rollout(task!, spec(task!), false);
    expect(Date.now() - t1).toBeLessThan(first);
    expect(noop.verdict).toMatchObject({ reward: 0, pass: false });
    // A later run (a new provider) finds the image by its tag and says so in its log.
    const later = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image: base });
    const sb = await later.create(spec(task!));
    await sb.destroy();
    expect(readFileSync(join(logDir, 'images', logs[0]!), 'utf8')).toContain('exists (content hash');
    const images = await provider.docker.listImages({ filters: { label: [LABEL_TASK_HASH] } });
    expect(images).toHaveLength(1);
  }, 240_000);

  it('without its image (environment copied into the plain sandbox image) the same oracle fails', async () => {
    const [task] = await loadHarbor(join(root, 'seeded'), { environment: 'copy' });
    expect(task!.environment).toBeUndefined();
    const r = await rollout(task!, spec(task!), true);
    expect(r.played!.exitCode).not.toBe(0);
    expect(r.played!.stderr).toContain('no seed.txt here');
    expect(r.verdict).toMatchObject({ reward: 0, pass: false });
  }, 120_000);

  it('a changed build context is a new image; a failing build is a coded error quoting the log and naming it', async () => {
    const dir = makeTask(root, 'changing', base);
    const [a] = await loadHarbor(dir);
    writeFileSync(join(dir, 'environment', 'data.txt'), 'hello again\n');
    const [b] = await loadHarbor(dir);
    expect(b!.environment!.hash).not.toBe(a!.environment!.hash);

    const [broken] = await loadHarbor(makeTask(root, 'broken', base, 'RUN echo about to fail && false'));
    const err = await provider.create(spec(broken!)).then(() => new Error('built'), (e: Error) => e);
    expect(err).toMatchObject({ code: 'CLAWGYM_IMAGE_BUILD_FAILED' });
    expect(err.message).toContain('about to fail');
    expect((err as { hint?: string }).hint).toMatch(/whole build log is .*images\/clawgym-task_/);
    const logPath = /whole build log is (\S+)/.exec(String((err as { hint?: string }).hint))![1]!;
    expect(existsSync(logPath)).toBe(true);
    expect(readFileSync(logPath, 'utf8')).toContain('FAILED');
  }, 240_000);
});
