import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkClisInSandbox, cliVersion, type Harness, type SandboxLimits, type SandboxSpec } from '@clawgym/core';
import { describeIf, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from './testing';
import { callModelFrom } from './model-call-fixture';
import { DockerSandboxProvider } from './provider';
import { LABEL_ROOT, LABEL_RUN } from './layout';

describeIf(dockerdMissing(), 'docker sandbox', () => {
  let dockerd: PrivateDockerd;
  let provider: DockerSandboxProvider;
  let image: string;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketDir: string;
  let socketPath: string;
  const runId = `t${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    dockerd = await startDockerd();
    image = await buildSandboxImage(dockerd.dockerHost);
    provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image });
    proxy = await startScriptedProxy(() => ({ text: 'hello from the model' }));
    socketDir = mkdtempSync(join(tmpdir(), 'clawgym-docker-proxy-'));
    socketPath = join(socketDir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }, 300_000);

  afterAll(async () => {
    await provider?.close();
    await provider?.sweep(runId).catch(() => {});
    await proxy?.close();
    if (proxy) rmSync(proxy.dir, { recursive: true, force: true });
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    await dockerd?.stop();
  }, 60_000);

  const spec = (rolloutId: string, limits: SandboxLimits = {}, run = runId): SandboxSpec => ({
    runId: run, rolloutId, limits, modelEndpoint: { socketPath, url: proxy.url },
  });

  async function withSandbox<T>(s: SandboxSpec, body: (sb: Awaited<ReturnType<DockerSandboxProvider['create']>>) => Promise<T>): Promise<T> {
    const sb = await provider.create(s);
    try { return await body(sb); } finally { await sb.destroy(); }
  }

  it('runs commands as a non-root user and lands workspace writes on the host, readable there', async () => {
    const t0 = Date.now();
    const sb = await provider.create(spec('write'));
    const created = Date.now() - t0;
    try {
      // A file the host put there (task setup, owned by root) is the agent's to change.
      writeFileSync(join(sb.workspaceHostPath, 'setup.txt'), 'from the host\n');
      const t1 = Date.now();
      const r = await sb.exec(['sh', '-c', 'id -u; echo from the agent > out.txt; echo edited >> setup.txt; mkdir -p d && echo x > d/y; pwd; echo $HOME']);
      const execMs = Date.now() - t1;
      expect(r).toMatchObject({ exitCode: 0, signal: null, timedOut: false });
      expect(r.stdout.split('\n')).toEqual(['1000', '/workspace', '/home/agent', '']);
      expect(readFileSync(join(sb.workspaceHostPath, 'out.txt'), 'utf8')).toBe('from the agent\n');
      expect(readFileSync(join(sb.workspaceHostPath, 'setup.txt'), 'utf8')).toBe('from the host\nedited\n');
      expect(readFileSync(join(sb.workspaceHostPath, 'd', 'y'), 'utf8')).toBe('x\n');
      expect(statSync(join(sb.workspaceHostPath, 'out.txt')).uid).toBe(1000);
      const t2 = Date.now();
      await sb.destroy();
      // eslint-disable-next-line no-console
      console.log(`docker sandbox latency: create+start ${created} ms, exec ${execMs} ms, destroy ${Date.now() - t2} ms`);
    } finally {
      await sb.destroy();
    }
  });

  it('fails writes outside the workspace and HOME', async () => {
    await withSandbox(spec('outside'), async (sb) => {
      const r = await sb.exec(['sh', '-c', 'touch /etc/x']);
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toMatch(/Permission denied|Read-only/);
      expect((await sb.exec(['sh', '-c', 'touch /home/agent/ok /tmp/ok && echo ok'])).stdout).toBe('ok\n');
      expect((await sb.exec(['sh', '-c', 'test -e /etc/x || echo absent'])).stdout).toBe('absent\n');
    });
  });

  it('cannot reach the host loopback, but reaches its own forwarder', async () => {
    const server: Server = createServer((c) => c.end('host says hi'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const probe = (p: number) => ['node', '-e', `const s=require('net').connect(${p},'127.0.0.1');s.on('connect',()=>{console.log('connected');process.exit(0)});s.on('error',e=>{console.log('unreachable',e.code);process.exit(0)});setTimeout(()=>{console.log('unreachable timeout');process.exit(0)},3000)`];
    try {
      await withSandbox(spec('net'), async (sb) => {
        expect((await sb.exec(probe(port))).stdout).toMatch(/^unreachable/);
        expect((await sb.exec(probe(4141))).stdout).toBe('connected\n');
        const ifaces = await sb.exec(['node', '-p', 'Object.keys(require("os").networkInterfaces()).join(",")']);
        expect(ifaces.stdout.trim()).toBe('lo');
      });
    } finally {
      server.close();
    }
  });

  it('finds its forwarder listening at its first command, with no warm container to hide a slow start', async () => {
    // busybox nc connects at once, without Node's start-up to give the forwarder time: before
    // create waited for the forwarder, this found nothing on the port (the e2e agentloop flake).
    const cold = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image, warmPool: 0 });
    try {
      for (let i = 0; i < 4; i++) {
        const sb = await cold.create(spec(`cold-${i}`));
        try {
          const r = await sb.exec(['sh', '-c', 'nc -w 2 127.0.0.1 4141 </dev/null; echo "nc exit $?"']);
          expect(r.stdout + r.stderr).toContain('nc exit 0');
        } finally {
          await sb.destroy();
        }
      }
    } finally {
      await cold.close();
    }
  }, 120_000);

  it('reaches the model endpoint through the proxy socket', async () => {
    await withSandbox(spec('model'), async (sb) => {
      expect(sb.modelBaseUrl).toBe('http://127.0.0.1:4141/s/model');
      const { apiKey } = proxy.proxy.openSession('model');
      const r = await callModelFrom(sb, apiKey);
      expect(r.stdout.trim()).toBe('200 hello from the model');
      expect(r.exitCode).toBe(0);
      await proxy.proxy.closeSession('model');
    });
  });

  it('enforces the pids and memory limits', async () => {
    await withSandbox(spec('limits', { pids: 64, memoryMb: 192, cpus: 0.5 }), async (sb) => {
      const c = await provider.docker.getContainer(sb.id).inspect();
      expect(c.HostConfig).toMatchObject({ PidsLimit: 64, Memory: 192 * 1024 * 1024, NanoCpus: 5e8, NetworkMode: 'none' });
      const forks = await sb.exec(['sh', '-c', 'for i in $(seq 100); do sleep 1 & done; wait; echo all-forked'], { timeoutMs: 15_000 });
      expect(forks.stdout).not.toContain('all-forked');
      expect(forks.stderr).toMatch(/can't fork|Resource temporarily unavailable/);
      const alloc = (mb: number) => ['node', '-e', `const a=[];for(let i=0;i<${mb};i++)a.push(Buffer.alloc(1<<20).fill(1));console.log('done')`];
      const small = await sb.exec(alloc(32));
      expect(small).toMatchObject({ exitCode: 0, stdout: 'done\n' });
      const big = await sb.exec(alloc(512), { timeoutMs: 20_000 });
      expect(big.stdout).not.toContain('done');
      expect(big.exitCode).not.toBe(0);
    });
  });

  it('kills a command at its timeout, its children too, and passes stdin', async () => {
    await withSandbox(spec('timeout'), async (sb) => {
      const t = Date.now();
      const r = await sb.exec(['sh', '-c', 'sleep 60 & sleep 60; echo never'], { timeoutMs: 500 });
      expect(Date.now() - t).toBeLessThan(10_000);
      expect(r).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
      expect(r.stdout).not.toContain('never');
      // Nothing of the killed command survives (the container's own process is the forwarder).
      const ps = await sb.exec(['ps', '-o', 'comm']);
      expect(ps.stdout.match(/^sleep$/gm)?.length ?? 0).toBe(0);
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 300);
      expect(await sb.exec(['sleep', '60'], { signal: ac.signal })).toMatchObject({ timedOut: false, exitCode: null, signal: 'SIGKILL' });
      expect(await sb.exec(['sh', '-c', 'cat; echo; echo err >&2; exit 3'], { stdin: 'piped in' }))
        .toEqual({ exitCode: 3, signal: null, stdout: 'piped in\n', stderr: 'err\n', timedOut: false });
      expect(await sb.exec(['cat'], { stdin: '', timeoutMs: 5000 })).toMatchObject({ exitCode: 0, stdout: '', timedOut: false });
    });
  });

  it('kills everything at the sandbox\'s wall-clock limit', async () => {
    await withSandbox(spec('wall', { wallMs: 1500 }), async (sb) => {
      const t = Date.now();
      expect(await sb.exec(['sleep', '60'])).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
      expect(Date.now() - t).toBeLessThan(10_000);
      expect(await sb.exec(['true'])).toMatchObject({ timedOut: true, exitCode: null });
    });
  });

  it('writes, copies in and out, and never follows the agent\'s links out of the sandbox on the host', async () => {
    const host = mkdtempSync(join(tmpdir(), 'clawgym-docker-copy-'));
    try {
      await withSandbox(spec('files'), async (sb) => {
        await sb.writeFile('/home/agent/.cfg/a.toml', 'k = 1\n');
        await sb.writeFile('rel/b.txt', Buffer.from('bee'));
        await sb.writeFile('/tmp/c.txt', 'sea');
        expect((await sb.exec(['sh', '-c', 'cat /home/agent/.cfg/a.toml rel/b.txt /tmp/c.txt; echo more >> rel/b.txt'])).stdout).toBe('k = 1\nbeesea');
        writeFileSync(join(host, 'f.txt'), 'file');
        await sb.copyIn(join(host, 'f.txt'), 'in/f.txt');
        await sb.copyIn(host, '/tmp/dir');
        expect((await sb.exec(['sh', '-c', 'cat in/f.txt /tmp/dir/f.txt; echo x >> in/f.txt'])).stdout).toBe('filefile');
        await sb.copyOut('rel', join(host, 'out'));
        expect(readFileSync(join(host, 'out', 'b.txt'), 'utf8')).toBe('beemore\n');
        await sb.copyOut('/tmp/c.txt', join(host, 'c.txt'));
        expect(readFileSync(join(host, 'c.txt'), 'utf8')).toBe('sea');

        // The agent links into the host's /etc; the host must not write or read through it.
        const marker = `clawgym-escape-${randomBytes(3).toString('hex')}`;
        await sb.exec(['ln', '-s', '/etc', 'etc-link']);
        await expect(sb.writeFile(`etc-link/${marker}`, 'x')).rejects.toThrow(/Read-only|Permission denied/);
        expect(existsSync(`/etc/${marker}`)).toBe(false);
        await sb.copyOut('etc-link/hostname', join(host, 'hostname'));
        expect(readFileSync(join(host, 'hostname'), 'utf8').trim()).not.toBe(readFileSync('/etc/hostname', 'utf8').trim());
      });
    } finally {
      rmSync(host, { recursive: true, force: true });
    }
  });

  it('destroy leaves no container and no folder, and is idempotent', async () => {
    const sb = await provider.create(spec('destroy'));
    const c = await provider.docker.getContainer(sb.id).inspect();
    const root = c.Config.Labels[LABEL_ROOT]!;
    expect(existsSync(root)).toBe(true);
    // Something still writing when destroy is called stops writing by the time it returns.
    await sb.exec(['sh', '-c', '(while true; do echo tick >> ticks; sleep 0.02; done) >/dev/null 2>&1 &']);
    await new Promise((r) => setTimeout(r, 200));
    await sb.destroy();
    const state = await provider.docker.getContainer(sb.id).inspect().then((i) => i.State, () => undefined);
    expect(state === undefined || state.Paused || !state.Running).toBe(true); // frozen, stopped or gone
    const ticks = join(sb.workspaceHostPath, 'ticks');
    const size = existsSync(ticks) ? statSync(ticks).size : -1;
    await new Promise((r) => setTimeout(r, 300));
    if (existsSync(ticks)) expect(statSync(ticks).size).toBe(size); // unchanged until it is removed
    await sb.destroy();
    await provider.settled(); // the frozen container is removed in the background
    await expect(provider.docker.getContainer(sb.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(existsSync(root)).toBe(false);
    expect(existsSync(sb.workspaceHostPath)).toBe(false);
  });

  it('hands sandboxes out from a warm pool of started containers, never the same container twice, and close() removes the spares', async () => {
    const pooled = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image, warmPool: 2 });
    const run = `${runId}-pool`;
    const count = async () => (await pooled.docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${run}`] } })).length;
    const seen = new Set<string>();
    const cold = Date.now();
    let sb = await pooled.create(spec('p0', {}, run));
    const coldMs = Date.now() - cold;
    try {
      for (let i = 1; i <= 4; i++) {
        seen.add(sb.id);
        await sb.exec(['sh', '-c', 'echo mine > left-behind.txt']);
        await sb.destroy();
        await new Promise((r) => setTimeout(r, 1500)); // the pool refills meanwhile
        const t = Date.now();
        sb = await pooled.create(spec(`p${i}`, {}, run));
        expect(Date.now() - t).toBeLessThan(coldMs);
        expect(seen.has(sb.id)).toBe(false);
        expect(existsSync(join(sb.workspaceHostPath, 'left-behind.txt'))).toBe(false);
        expect((await sb.exec(['cat', '/workspace/left-behind.txt'])).exitCode).not.toBe(0);
      }
      // The one handed out and two spares, once the pool has refilled (slower on a loaded machine).
      for (const until = Date.now() + 20_000; await count() < 3 && Date.now() < until;) await new Promise((r) => setTimeout(r, 200));
      expect(await count()).toBe(3);
    } finally {
      await sb.destroy();
      await pooled.close();
    }
    expect(await count()).toBe(0);
  }, 60_000);

  it('sweep (as clawgym gc: every run) removes what a killed runner left, and nothing of a live run beside it', async () => {
    const crashed = `${runId}-crashed`;
    const live = `${runId}-live`;
    // A runner in another process makes two sandboxes (one with a process running inside), then is killed -9.
    const code = `const { DockerSandboxProvider } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'provider.js'))});
      (async () => { const p = new DockerSandboxProvider({ socketPath: process.argv[1], image: process.argv[2], warmPool: 0 });
        const spec = (r) => ({ runId: process.argv[3], rolloutId: r, limits: {}, modelEndpoint: { socketPath: process.argv[4], url: 'http://127.0.0.1:9' } });
        const a = await p.create(spec('a')); await p.create(spec('b'));
        await a.exec(['sh', '-c', 'sleep 600 >/dev/null 2>&1 &']);
        process.stdout.write('READY\\n'); setInterval(() => {}, 1000); })().catch((e) => { console.error(e); process.exit(1); });`;
    const runner = spawn(process.execPath, ['-e', code, dockerd.socketPath, image, crashed, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((ok, fail) => { runner.stdout.on('data', (d: Buffer) => { if (d.toString().includes('READY')) ok(); }); runner.on('exit', () => fail(new Error('the runner exited early'))); });
    runner.kill('SIGKILL');
    await new Promise((r) => runner.on('exit', r));
    // No warm spares here: the test counts containers.
    const provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image, warmPool: 0 });
    const keep = await provider.create(spec('c', {}, live)); // this process is alive: its run must survive
    try {
      const report = await provider.sweep();
      // Both of the killed runner's sandboxes (and any spare it had started), all of its run.
      const containers = report.removed.filter((r) => r.startsWith('container'));
      expect(containers.length).toBeGreaterThanOrEqual(2);
      expect(containers.every((r) => r.includes(`-${crashed}-`))).toBe(true);
      const remaining = await provider.docker.listContainers({ all: true, filters: { label: [LABEL_RUN] } });
      // (Other tests' providers keep warm spares of their own run.)
      expect(remaining.map((c) => c.Labels[LABEL_RUN]).filter((r) => r === crashed || r === live)).toEqual([live]);
      expect(existsSync(keep.workspaceHostPath)).toBe(true);
      expect((await keep.exec(['true'])).exitCode).toBe(0);
      expect((await provider.sweep()).removed).toEqual([]);
    } finally {
      await keep.destroy();
    }
  }, 120_000);

  it('checks itself for clawgym doctor: the engine answers and has the image, or says what to run', async () => {
    expect(await provider.check()).toEqual({ ok: true, reason: expect.stringMatching(new RegExp(`^unix://${dockerd.socketPath}: engine \\d\\S*, image ${image}$`)) });
    const noImage = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image: 'clawgym-sandbox:never-built' });
    expect(await noImage.check()).toEqual({ ok: false, reason: expect.stringContaining('image clawgym-sandbox:never-built missing'), install: `DOCKER_HOST=unix://${dockerd.socketPath} bash scripts/docker-image.sh` });
    const noOpenclaw = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image: 'clawgym-openclaw:never-built' });
    expect(await noOpenclaw.check()).toEqual({ ok: false, reason: expect.stringContaining('image clawgym-openclaw:never-built missing'), install: `DOCKER_HOST=unix://${dockerd.socketPath} bash scripts/openclaw-image.sh` });
    const nobody = new DockerSandboxProvider({ socketPath: join(socketDir, 'no-engine.sock'), image });
    const down = await nobody.check();
    expect(down).toMatchObject({ ok: false, reason: expect.stringContaining('no Docker engine answers'), install: expect.stringContaining('apt-get install -y docker.io') });
  });

  it('clawgym doctor looks for harness CLIs inside the image (a sandbox of it), not on this machine', async () => {
    const harness = (name: string, argv: string[]) => ({ name, wireFormat: 'openai-chat', check: async () => ({ ok: false }), run: async () => { throw new Error('not run'); },
      version: (_o: Record<string, unknown>, run?: Parameters<typeof cliVersion>[1]) => cliVersion(argv, run) }) as unknown as Harness;
    expect(provider.systemOf()).toBe(`image ${image}`);
    const [inImage, absent] = await checkClisInSandbox(provider, provider.systemOf(), [
      // /etc/hostname of a container is its own (not this machine's): proof it ran inside.
      { harness: harness('present', ['sh', '-c', 'test "$(cat /etc/hostname)" != "$0" && echo present 1.2.3', hostname()]), options: {} },
      { harness: harness('openclaw', ['openclaw', '--version']), options: {} },
    ]);
    expect(inImage).toEqual({ ok: true, reason: `present 1.2.3 inside the sandbox (image ${image})` });
    expect(absent).toMatchObject({ ok: false, reason: expect.stringContaining(`openclaw does not answer --version inside the sandbox (image ${image})`) });
  });

  it('describes its isolation in one line', async () => {
    const line = await provider.describeIsolation();
    expect(line).toMatch(/^docker \(engine \d/);
    expect(line).not.toContain('\n');
  });
});
