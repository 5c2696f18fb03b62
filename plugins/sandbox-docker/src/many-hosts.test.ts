/**
 * Many Docker hosts, for real: two engines on this machine, each in a network namespace of its
 * own and reached only over TCP on a veth, so they are "remote" to the provider (nothing bound
 * from our filesystem: workspace by the archive API, model by the exec tunnel). One engine is
 * killed mid-run; its rollouts must be retried on the other and none scored 0, and it must get
 * rollouts again once it answers.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsWorkspace, oracleOf, type Harness, type SandboxSpec, type Task } from '@clawgym/core';
import { loadHarbor } from '@clawgym/task-formats';
import { describeIf, startScriptedProxy } from '@clawgym/core/testing';
import { RolloutRunner, type RolloutReport } from '../../../core/src/6-rollout/runner';
import { buildSandboxImage, dockerdMissing, makeTestNetns, netnsMissing, startDockerd, type PrivateDockerd, type TestNetns } from './testing';
import { makeHarborTask } from './harbor-fixture';
import { taskImageTag } from './task-image';
import { DockerSandboxProvider } from './provider';

jest.setTimeout(180_000);

interface Placed { rolloutId: string; host: string; mounts?: Array<{ Type: string }>; binds?: unknown }

/** Where each attempt ran, and what its container had mounted. */
const placed: Placed[] = [];
let onStarted: (p: Placed) => void = () => undefined;

/**
 * One model call through the sandbox's model URL, then write what it said after the task's own
 * input (set up on the host), then stay a while so rollouts are in flight when a host dies.
 */
const agent: Harness = {
  name: 'agent', wireFormat: 'openai-chat', check: async () => ({ ok: true }),
  async run(ctx) {
    // The provider's own view of the sandbox: where it runs, its container (its spec is private).
    const sb = ctx.sandbox as unknown as { placement: { host: { url: string } }; spec: { rolloutId: string }; container: { inspect(): Promise<{ Mounts: Array<{ Type: string }>; HostConfig: { Binds?: unknown } }> } };
    const p: Placed = { rolloutId: sb.spec.rolloutId, host: sb.placement.host.url };
    placed.push(p);
    const info = await sb.container.inspect();
    p.mounts = info.Mounts;
    p.binds = info.HostConfig.Binds;
    onStarted(p);
    const code = `(async () => { const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
      headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [] }) });
      const msg = (await r.json()).choices[0].message; const fs = require('fs');
      for (const c of msg.tool_calls ?? []) { const a = JSON.parse(c.function.arguments); fs.writeFileSync(a.path, fs.readFileSync('input.txt', 'utf8') + ':' + a.content); }
      await new Promise((r) => setTimeout(r, 2500)); })()`;
    const r = await ctx.sandbox.exec(['node', '-e', code], { env: { OPENAI_BASE_URL: `${ctx.endpoint.baseUrl}/v1`, OPENAI_API_KEY: ctx.endpoint.apiKey }, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
    return { exitCode: r.exitCode, timedOut: r.timedOut, logTail: `${r.stdout}${r.stderr}` };
  },
};

const task = (id: string): Task => ({
  id, category: 'files', instruction: 'write out.txt',
  setup: async (ws) => { await ws.writeFile('input.txt', `secret-${id}`); },
  verify: async (ws) => {
    const got = await ws.exists('out.txt') ? (await ws.readFile('out.txt')).toString('utf8') : '(none)';
    const ok = got === `secret-${id}:ok`;
    return { reward: ok ? 1 : 0, pass: ok, details: `out.txt: ${got}` };
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PIDs of processes whose command line names `dir` (a killed dockerd's containerd and shims). */
function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try { if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(dir)) pids.push(Number(e)); } catch { /* gone */ }
  }
  return pids;
}

describeIf(dockerdMissing() ?? netnsMissing(), 'two Docker hosts in their own network namespaces', () => {
  const nets: TestNetns[] = [];
  const engines: PrivateDockerd[] = [];
  const roots: string[] = [];
  let provider: DockerSandboxProvider;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  let image = '';
  const runId = `mh${process.pid}`;

  const startEngine = async (i: number) => startDockerd({ root: roots[i], netns: nets[i]!.name, tcp: `${nets[i]!.nsIp}:2375` });

  beforeAll(async () => {
    for (const i of [0, 1]) {
      nets.push(makeTestNetns(i));
      roots.push(await mkdtemp(join(tmpdir(), 'cgh-')));
    }
    engines.push(...await Promise.all([0, 1].map(startEngine)));
    // No registry: the image is built on each engine, over its TCP API.
    const tags = await Promise.all(engines.map((e) => buildSandboxImage(e.tcpHost!)));
    image = tags[0]!;
    expect(tags[1]).toBe(image);
    provider = new DockerSandboxProvider({
      hosts: engines.map((e) => ({ url: e.tcpHost!, maxSandboxes: 3 })), image, warmPool: 1, probeMs: 500,
    });
    proxy = await startScriptedProxy(() => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'ok' } }] }));
    socketPath = join(proxy.dir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }, 150_000);

  afterAll(async () => {
    await provider?.close().catch(() => undefined);
    await provider?.sweep(runId).catch(() => undefined);
    await proxy?.close();
    await Promise.all(engines.map((e) => e.stop({ keep: true }).catch(() => undefined)));
    // What a SIGKILLed dockerd leaves (its containerd, shims, container processes), by PID.
    for (const root of roots) for (const pid of processesUnder(root)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    for (const n of nets) n.remove();
    for (const root of roots) {
      const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4]).filter((p): p is string => !!p && p.startsWith(root));
      for (const m of mounts.sort((a, b) => b.length - a.length)) require('node:child_process').spawnSync('umount', ['-l', m]);
      rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);

  const runner = () => new RolloutRunner({
    runId, proxy: proxy.proxy, socketPath, sandboxes: provider, concurrency: 4, timeoutMs: 30_000, infraRetries: 2, limits: { pids: 128, memoryMb: 512 },
  });
  const jobs = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ rolloutId: `${prefix}${i}`, step: 0, task: task(`${prefix}${i}`), harness: agent }));

  it('a sandbox on a remote host: files in and out, a timed-out command killed with its group, the workspace got back after a wall-clock kill', async () => {
    const spec = (rolloutId: string, wallMs?: number): SandboxSpec => ({ runId, rolloutId, limits: { pids: 64, wallMs }, modelEndpoint: { socketPath, url: proxy.url } });
    const sb = await provider.create(spec('files'));
    const scratch = mkdtempSync(join(tmpdir(), 'cgh-files-'));
    try {
      writeFileSync(join(sb.workspaceHostPath, 'setup.txt'), 'from the setup');
      mkdirSync(join(scratch, 'in', 'sub'), { recursive: true });
      writeFileSync(join(scratch, 'in', 'sub', 'x.txt'), 'copied in');
      await sb.writeFile('notes/a.txt', 'written');
      await sb.copyIn(join(scratch, 'in'), 'in');
      const r = await sb.exec(['sh', '-c', 'id -u; cat setup.txt notes/a.txt in/sub/x.txt; echo; echo out > made.txt; stat -c %u setup.txt in/sub/x.txt']);
      expect(r).toMatchObject({ exitCode: 0, stdout: '1000\nfrom the setupwrittencopied in\n1000\n1000\n' });
      await sb.copyOut('made.txt', join(scratch, 'made.txt'));
      expect(readFileSync(join(scratch, 'made.txt'), 'utf8')).toBe('out\n');
      // A command past its timeout is killed with what it started (from inside: its PID is the remote machine's).
      const t0 = Date.now();
      const slow = await sb.exec(['sh', '-c', 'sleep 30 & sleep 30'], { timeoutMs: 500 });
      expect(slow).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect((await sb.exec(['sh', '-c', 'ps -o comm | grep -c "^sleep" || true'])).stdout.trim()).toBe('0');
    } finally {
      await sb.destroy();
      rmSync(scratch, { recursive: true, force: true });
    }
    // The wall-clock limit kills the container; what the agent wrote is still got back.
    const walled = await provider.create(spec('wall', 2000));
    try {
      const r = await walled.exec(['sh', '-c', 'echo before the kill > w.txt; sleep 30']);
      expect(r).toMatchObject({ exitCode: null, timedOut: true });
      await walled.sync!();
      expect(readFileSync(join(walled.workspaceHostPath, 'w.txt'), 'utf8')).toBe('before the kill\n');
    } finally {
      await walled.destroy();
    }
  });

  it('read-only paths on a remote host: one volume per run and folder, filled once, shared read-only by its sandboxes, removed at close', async () => {
    // Not under /tmp: that is a tmpfs in the container, and the engine cannot make a mount point
    // inside it on a read-only root (a harness's folder is never there either).
    mkdirSync(join(__dirname, '..', '..', '..', '.cache'), { recursive: true });
    const ro = mkdtempSync(join(__dirname, '..', '..', '..', '.cache', 'cgh-ro-'));
    mkdirSync(join(ro, 'cli', 'lib'), { recursive: true });
    writeFileSync(join(ro, 'cli', 'lib', 'main.js'), 'console.log("the harness")');
    writeFileSync(join(ro, 'script.sh'), 'echo from a plugin\n');
    writeFileSync(join(ro, 'not-asked.txt'), 'private');
    const one = new DockerSandboxProvider({ hosts: [{ url: engines[1]!.tcpHost!, maxSandboxes: 3 }], image, warmPool: 0 });
    const roRun = `${runId}-ro`;
    const volumesOf = async () => (await one.docker.listVolumes({ filters: { label: [`clawgym.run=${roRun}`] } })).Volumes ?? [];
    try {
      const spec = (rolloutId: string): SandboxSpec => ({ runId: roRun, rolloutId, limits: { pids: 64 }, readOnlyPaths: [join(ro, 'cli'), join(ro, 'script.sh')], modelEndpoint: { socketPath, url: proxy.url } });
      const boxes = await Promise.all(['ro-a', 'ro-b', 'ro-c'].map((id) => one.create(spec(id))));
      try {
        for (const sb of boxes) {
          const r = await sb.exec(['sh', '-c', `cat ${join(ro, 'cli', 'lib', 'main.js')}; echo; cat ${join(ro, 'script.sh')}; ls ${ro}; touch ${join(ro, 'cli', 'x')} 2>&1 || echo refused`]);
          // The CLI's files and the script are there, nothing else of the folder, and none is writable.
          expect(r.stdout).toBe(`console.log("the harness")\necho from a plugin\ncli\nscript.sh\ntouch: ${join(ro, 'cli', 'x')}: Read-only file system\nrefused\n`);
        }
        // Two folders (the CLI, the script's folder holding only the script), made once for the three sandboxes.
        expect((await volumesOf()).length).toBe(2);
      } finally {
        await Promise.all(boxes.map((sb) => sb.destroy()));
      }
    } finally {
      await one.close();
      rmSync(ro, { recursive: true, force: true });
    }
    expect(await volumesOf()).toEqual([]);
  });

  it("sweep (clawgym gc) removes a killed runner's containers and read-only volumes on a remote host, and nothing of a live run", async () => {
    mkdirSync(join(__dirname, '..', '..', '..', '.cache'), { recursive: true });
    const ro = mkdtempSync(join(__dirname, '..', '..', '..', '.cache', 'cgh-gc-'));
    writeFileSync(join(ro, 'tool.sh'), 'echo tool\n');
    const host = engines[1]!.tcpHost!;
    const crashed = `${runId}-gc-crashed`;
    const live = `${runId}-gc-live`;
    const spec = (run: string, rolloutId: string): SandboxSpec => ({ runId: run, rolloutId, limits: { pids: 64 }, readOnlyPaths: [ro], modelEndpoint: { socketPath, url: proxy.url } });
    // A runner in another process makes a sandbox with a read-only path there (a run's volume), then is killed -9.
    const code = `const { DockerSandboxProvider } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'provider.js'))});
      (async () => { const p = new DockerSandboxProvider({ hosts: [{ url: process.argv[1] }], image: process.argv[2], warmPool: 0 });
        const sb = await p.create(${JSON.stringify(spec(crashed, 'a'))});
        const r = await sb.exec(['sh', '-c', 'sh ${join(ro, 'tool.sh')}']); if (r.stdout !== 'tool\\n') throw new Error('no read-only path: ' + JSON.stringify(r));
        process.stdout.write('READY\\n'); setInterval(() => {}, 1000); })().catch((e) => { console.error(e); process.exit(1); });`;
    const child = require('node:child_process').spawn(process.execPath, ['-e', code, host, image], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((ok, fail) => { child.stdout.on('data', (d: Buffer) => { if (d.toString().includes('READY')) ok(); }); child.on('exit', () => fail(new Error('the runner exited early'))); });
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const gc = new DockerSandboxProvider({ hosts: [{ url: host }], image, warmPool: 0 });
    const ofRun = async (run: string) => ({
      containers: (await gc.docker.listContainers({ all: true, filters: { label: [`clawgym.run=${run}`] } })).length,
      volumes: ((await gc.docker.listVolumes({ filters: { label: [`clawgym.run=${run}`] } })).Volumes ?? []).length,
    });
    try {
      expect(await ofRun(crashed)).toEqual({ containers: 1, volumes: 1 });
      const keep = await gc.create(spec(live, 'b')); // this process is alive: its run must survive
      try {
        expect(await ofRun(live)).toEqual({ containers: 1, volumes: 1 });
        const report = await gc.sweep();
        expect(report.removed.filter((r) => r.startsWith('volume')).length).toBe(1);
        expect(report.removed.every((r) => r.includes(crashed) || r.startsWith('dir '))).toBe(true);
        expect(await ofRun(crashed)).toEqual({ containers: 0, volumes: 0 });
        expect(await ofRun(live)).toEqual({ containers: 1, volumes: 1 });
        expect((await keep.exec(['sh', join(ro, 'tool.sh')])).stdout).toBe('tool\n');
      } finally {
        await keep.destroy();
      }
    } finally {
      await gc.close();
      rmSync(ro, { recursive: true, force: true });
    }
    expect(await ofRun(live)).toEqual({ containers: 0, volumes: 0 });
  });

  it("a Harbor task's own image is built on the remote host it lands on, and its oracle passes only there", async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'cgh-harbor-'));
    try {
      const [harbor] = await loadHarbor(makeHarborTask(scratch, 'seeded', image));
      const [plain] = await loadHarbor(join(scratch, 'seeded'), { environment: 'copy' });
      const rollout = async (t: Task, rolloutId: string) => {
        const sb = await provider.create({ runId, rolloutId, limits: { wallMs: 60_000, ...t.limits }, environment: t.environment, logDir: join(scratch, 'run'), modelEndpoint: { socketPath, url: proxy.url } });
        try {
          const ws = fsWorkspace(sb.workspaceHostPath);
          await t.setup(ws);
          const command = String((await oracleOf(t))![0]!.toolCalls[0]!.arguments.command);
          const played = await sb.exec(['/bin/sh', '-c', command], { timeoutMs: 30_000 });
          await sb.sync!();
          const host = (sb as unknown as { placement: { host: { url: string; docker: { listImages(o: unknown): Promise<Array<{ RepoTags?: string[] }>> } } } }).placement.host;
          const images = (await host.docker.listImages({ filters: { reference: ['clawgym-task'] } })).flatMap((i) => i.RepoTags ?? []);
          return { played, verdict: await t.verify(ws, { sandbox: sb }), workspace: sb.workspacePath, out: readFileSync(join(sb.workspaceHostPath, 'out.txt'), 'utf8'), host: host.url, images };
        } finally {
          await sb.destroy();
        }
      };
      const good = await rollout(harbor!, 'harbor-own');
      // Nothing of ours is bound there: the image was built through that host's API, and the
      // workspace (the image's WORKDIR) came back through the archive API before the verifier.
      expect(engines.map((e) => e.tcpHost)).toContain(good.host);
      expect(good.images).toEqual([taskImageTag(harbor!.environment!)]);
      expect(good.workspace).toBe('/app');
      expect(good.played).toMatchObject({ exitCode: 0 });
      expect(good.out).toBe('42\nhello\nfrom-the-dockerfile\n');
      expect(good.verdict).toMatchObject({ reward: 1, pass: true });
      // The same oracle in the plain image (environment copied, no Dockerfile run) fails.
      const bad = await rollout(plain!, 'harbor-plain').catch((e: Error) => ({ played: { exitCode: -1, stderr: e.message } }));
      expect(bad.played.exitCode).not.toBe(0);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('spreads rollouts over both hosts; a host killed mid-run has its rollouts retried on the other, none scored 0; it gets rollouts again once it answers', async () => {
    const [a, b] = engines as [PrivateDockerd, PrivateDockerd];
    const [hostA, hostB] = provider.hosts.list;
    // Kill engine A once two rollouts are running on it (their commands in flight).
    let killedAt: number | undefined;
    let handedOutOnAAtKill = 0;
    let onA = 0;
    const killed = new Promise<void>((resolve) => {
      onStarted = (p) => {
        if (p.host !== a.tcpHost || ++onA !== 2) return;
        setTimeout(() => {
          handedOutOnAAtKill = hostA!.handedOut;
          killedAt = Date.now();
          process.kill(a.pid, 'SIGKILL');
          resolve();
        }, 800);
      };
    });
    const reports: RolloutReport[] = await runner().run(jobs('r', 12));
    await killed;
    onStarted = () => undefined;

    // Nothing bound from our filesystem: volumes only (workspace, HOME), no binds, no socket.
    const inspected = placed.filter((p) => p.mounts);
    expect(inspected.length).toBeGreaterThanOrEqual(12);
    for (const p of inspected) {
      expect(p.binds ?? []).toEqual([]);
      expect(p.mounts!.map((m) => m.Type)).toEqual(['volume', 'volume']);
    }
    // Every rollout scored by its verifier, which read what the agent wrote in the container
    // after the setup's input went in: none is an infra error, none scored 0.
    expect(reports).toHaveLength(12);
    for (const r of reports) expect({ id: r.rolloutId, outcome: r.outcome, reward: r.reward, details: r.verdict?.details }).toEqual({ id: r.rolloutId, outcome: 'ok', reward: 1, details: `out.txt: secret-${r.rolloutId}:ok` });
    // Both hosts took rollouts before the kill; the ones in flight on A were retried on B.
    const firstTry = placed.filter((p) => !p.rolloutId.includes('.retry'));
    expect(new Set(firstTry.map((p) => p.host))).toEqual(new Set([a.tcpHost, b.tcpHost]));
    const retried = reports.filter((r) => r.attempts > 1);
    expect(retried.length).toBeGreaterThanOrEqual(2);
    for (const r of retried) {
      expect(placed.find((p) => p.rolloutId === r.rolloutId)?.host).toBe(a.tcpHost);
      expect(placed.find((p) => p.rolloutId === r.sessionId)?.host).toBe(b.tcpHost);
    }
    // A was marked down and got nothing after the kill.
    expect(hostA!.healthy).toBe(false);
    expect(hostA!.handedOut).toBe(handedOutOnAAtKill);
    expect(hostB!.healthy).toBe(true);
    // eslint-disable-next-line no-console
    console.log(`killed host A ${Date.now() - killedAt!} ms before the run ended; ${retried.length} rollouts retried on B; placements: ${placed.map((p) => `${p.rolloutId}@${p.host === a.tcpHost ? 'A' : 'B'}`).join(' ')}`);

    // A answers again (same data root: its old containers are cleaned up by the engine) and
    // the probe puts it back: new rollouts reach it.
    engines[0] = await startEngine(0);
    for (let i = 0; i < 40 && !hostA!.healthy; i++) await sleep(250);
    expect(hostA!.healthy).toBe(true);
    const before = hostA!.handedOut;
    const again = await runner().run(jobs('s', 4));
    for (const r of again) expect({ outcome: r.outcome, reward: r.reward }).toEqual({ outcome: 'ok', reward: 1 });
    expect(hostA!.handedOut).toBeGreaterThan(before);
  });
});
