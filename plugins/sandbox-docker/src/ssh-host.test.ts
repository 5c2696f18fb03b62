/**
 * A Docker host over `ssh://`, for real: an OpenSSH server in a network namespace of its own,
 * reached over a veth, whose sessions reach a private dockerd (`docker system dial-stdio`, as
 * the Docker CLI does). The provider logs in with a key file (`hosts: [{ url, sshKey }]`) and
 * runs a sandbox there: commands, files, a model call through the exec tunnel, several at once,
 * over one kept ssh connection;
 * an unknown client key and a host key known_hosts does not list are refused.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '@clawgym/core';
import { describeIf, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, makeTestNetns, netnsMissing, sshdMissing, sshKeygen, startDockerd, startTestSshd, type PrivateDockerd, type TestNetns, type TestSshd } from './testing';
import { callModelFrom } from './model-call-fixture';
import { DockerSandboxProvider } from './provider';
import { SshDialAgent } from './ssh-dial';

jest.setTimeout(120_000);

describeIf(dockerdMissing() ?? netnsMissing() ?? sshdMissing(), 'a Docker host over ssh://, an OpenSSH server in its own network namespace', () => {
  let net: TestNetns | undefined;
  let dockerd: PrivateDockerd | undefined;
  let sshd: TestSshd | undefined;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  let image = '';
  let url = '';
  const dir = mkdtempSync(join(tmpdir(), 'cgssh-t-'));
  const runId = `ssh${process.pid}`;
  const ok = () => ({ url, sshKey: sshd!.clientKey, sshKnownHosts: sshd!.knownHosts });

  beforeAll(async () => {
    net = makeTestNetns(3);
    dockerd = await startDockerd();
    image = await buildSandboxImage(dockerd.dockerHost);
    sshd = await startTestSshd(net, dockerd.dockerHost);
    url = sshd.url;
    // A key the server does not know, and a known_hosts that lists another key for the server.
    sshKeygen(join(dir, 'stranger'));
    const other = readFileSync(join(dir, 'stranger.pub'), 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(join(dir, 'wrong_known_hosts'), `${net.nsIp} ${other}\n`);
    proxy = await startScriptedProxy(() => ({ text: 'hello over ssh' }));
    socketPath = join(proxy.dir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }, 150_000);

  afterAll(async () => {
    await proxy?.close();
    await sshd?.stop();
    await dockerd?.stop();
    net?.remove();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** The run's containers on the engine, asked over its own socket (not through ssh). */
  const containersOfRun = async () => {
    const local = new DockerSandboxProvider({ socketPath: dockerd!.socketPath, image, warmPool: 0 });
    try {
      return await local.docker.listContainers({ all: true, filters: { label: [`clawgym.run=${runId}`] } });
    } finally {
      await local.close();
    }
  };

  const spec = (rolloutId: string): SandboxSpec => ({ runId, rolloutId, limits: { pids: 64 }, modelEndpoint: { socketPath, url: proxy.url } });

  it('runs sandboxes on the engine behind the ssh server: commands, files and model calls, two at once', async () => {
    const provider = new DockerSandboxProvider({ hosts: [ok()], image, warmPool: 0 });
    try {
      const boxes = await Promise.all(['a', 'b'].map((id) => provider.create(spec(id))));
      try {
        await Promise.all(boxes.map(async (sb, i) => {
          await sb.writeFile('in.txt', `from the host ${i}`);
          expect(await sb.exec(['sh', '-c', 'id -u; cat in.txt'])).toMatchObject({ exitCode: 0, stdout: `1000\nfrom the host ${i}` });
          const id = ['a', 'b'][i]!;
          const { apiKey } = proxy.proxy.openSession(id);
          const r = await callModelFrom(sb, apiKey);
          expect(r.stdout.trim()).toBe('200 hello over ssh');
          await sb.exec(['sh', '-c', 'echo made > out.txt']);
          await sb.sync!();
          expect(readFileSync(join(sb.workspaceHostPath, 'out.txt'), 'utf8')).toBe('made\n');
          await proxy.proxy.closeSession(id);
        }));
      } finally {
        await Promise.all(boxes.map((sb) => sb.destroy()));
      }
      expect(await provider.describeIsolation()).toContain(`docker (${url} (remote: workspace by archive, model by exec tunnel) engine `);
    } finally {
      await provider.close();
    }
    expect(await containersOfRun()).toEqual([]);
  });

  it('keeps its ssh connection and dial-stdio channels for the next requests', async () => {
    // dockerode's own ssh transport logged in and started `docker system dial-stdio` for every
    // request (~0.2 s each here); the agent keeps both, as HTTP keep-alive keeps a TCP connection.
    const provider = new DockerSandboxProvider({ hosts: [ok()], image, warmPool: 0 });
    try {
      const agent = (provider.docker as unknown as { modem: { agent: SshDialAgent } }).modem.agent;
      expect(agent).toBeInstanceOf(SshDialAgent);
      for (let i = 0; i < 20; i++) await provider.docker.ping();
      await Promise.all(Array.from({ length: 6 }, () => provider.docker.version()));
      expect(agent.opened.connections).toBe(1);
      expect(agent.opened.channels).toBeLessThanOrEqual(6); // at most one per request in flight at once
    } finally {
      await provider.close();
    }
  });

  it("with sshDockerSocket, forwards each request to the engine's socket instead of starting dial-stdio", async () => {
    const provider = new DockerSandboxProvider({ hosts: [{ ...ok(), sshDockerSocket: dockerd!.socketPath }], image, warmPool: 0 });
    try {
      const agent = (provider.docker as unknown as { modem: { agent: SshDialAgent } }).modem.agent;
      for (let i = 0; i < 5; i++) await provider.docker.ping();
      const sb = await provider.create(spec('fwd'));
      try {
        expect(await sb.exec(['sh', '-c', 'echo forwarded'])).toMatchObject({ exitCode: 0, stdout: 'forwarded\n' });
      } finally {
        await sb.destroy();
      }
      expect(agent.opened.connections).toBe(1);
    } finally {
      await provider.close();
    }
    // A socket path with nothing behind it: a clear error, not a hang-up.
    const wrong = new DockerSandboxProvider({ hosts: [{ ...ok(), sshDockerSocket: '/nonexistent/docker.sock' }], image, warmPool: 0 });
    try {
      await expect(wrong.create(spec('nofwd'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: expect.stringMatching(new RegExp(`^Docker host ${url}: logged in, but no Docker engine answers there \\(ssh forwarding to /nonexistent/docker.sock`)),
        hint: expect.stringContaining('AllowStreamLocalForwarding'),
      });
    } finally {
      await wrong.close().catch(() => undefined);
    }
  });

  it('says so when the host logs us in but its dial-stdio reaches no engine', async () => {
    // A second sshd on the same host whose sessions' DOCKER_HOST points at nothing.
    const lost = await startTestSshd(net!, 'unix:///nonexistent/docker.sock', { port: 2222 });
    const provider = new DockerSandboxProvider({ hosts: [{ url: lost.url, sshKey: lost.clientKey, sshKnownHosts: lost.knownHosts }], image, warmPool: 0 });
    try {
      await expect(provider.create(spec('lost'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID',
        message: expect.stringMatching(new RegExp(`^Docker host ${lost.url}: logged in, but no Docker engine answers there \\(docker system dial-stdio on the host exited 1: .*nonexistent/docker.sock`)),
      });
      expect(await provider.check()).toMatchObject({ ok: false, reason: expect.stringContaining('no Docker engine answers there') });
    } finally {
      await provider.close().catch(() => undefined);
      await lost.stop();
    }
  });

  it('refuses a key the server does not know, and a server whose host key known_hosts does not list, saying which', async () => {
    const stranger = new DockerSandboxProvider({ hosts: [{ ...ok(), sshKey: join(dir, 'stranger') }], image, warmPool: 0 });
    try {
      expect(await stranger.check()).toEqual({ ok: false, reason: expect.stringMatching(new RegExp(`^Docker host ${url} refused our ssh key .*authorized_keys`)) });
      await expect(stranger.create(spec('stranger'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: `Docker host ${url} refused our ssh key (All configured authentication methods failed)`,
        hint: expect.stringContaining('authorized_keys'),
      });
    } finally {
      await stranger.close().catch(() => undefined);
    }
    // The right login, but the host presents a key other than the one known_hosts lists (a man in the middle, or a reinstall).
    const impostor = new DockerSandboxProvider({ hosts: [{ ...ok(), sshKnownHosts: join(dir, 'wrong_known_hosts') }], image, warmPool: 0 });
    try {
      await expect(impostor.create(spec('impostor'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: expect.stringMatching(new RegExp(`^Docker host ${url} presented a host key that its known_hosts entry does not list`)),
      });
    } finally {
      await impostor.close().catch(() => undefined);
    }
    // Neither made a container there.
    expect(await containersOfRun()).toEqual([]);
  });
});
