/**
 * A Docker host over `ssh://`, for real: an OpenSSH server in a network namespace of its own,
 * reached over a veth, whose sessions reach a private dockerd (`docker system dial-stdio`, as
 * the Docker CLI does). The provider logs in with a key file (`hosts: [{ url, sshKey }]`) and
 * runs a sandbox there: commands, files, a model call through the exec tunnel, several at once,
 * over one kept ssh connection;
 * an unknown client key and a host key known_hosts does not list are refused.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '@clawgym/core';
import { describeIf, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, makeTestNetns, netnsMissing, startDockerd, type PrivateDockerd, type TestNetns } from './dockerd';
import { DockerSandboxProvider } from './provider';
import { SshDialAgent } from './ssh-dial';

jest.setTimeout(120_000);

const SSHD = '/usr/sbin/sshd';
const sshdMissing = () => (spawnSync(SSHD, ['-V'], { stdio: 'ignore' }).error || spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error
  ? 'OpenSSH is not installed (apt-get install openssh-server)' : undefined);

const keygen = (file: string) => {
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ssh-keygen: ${r.stderr}`);
};

/** Resolve once something accepts TCP connections at host:port. */
async function listening(host: string, port: number, ms = 20_000): Promise<void> {
  for (const t = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
    const ok = await new Promise<boolean>((done) => { const s = connect(port, host, () => { s.destroy(); done(true); }); s.on('error', () => done(false)); });
    if (ok) return;
    if (Date.now() - t > ms) throw new Error(`nothing listens on ${host}:${port}`);
  }
}

describeIf(dockerdMissing() ?? netnsMissing() ?? sshdMissing(), 'a Docker host over ssh://, an OpenSSH server in its own network namespace', () => {
  let net: TestNetns | undefined;
  let dockerd: PrivateDockerd | undefined;
  let sshd: ChildProcess | undefined;
  let sshdLog = '';
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  let image = '';
  let url = '';
  const dir = mkdtempSync(join(tmpdir(), 'cgssh-'));
  const runId = `ssh${process.pid}`;

  beforeAll(async () => {
    net = makeTestNetns(3);
    dockerd = await startDockerd();
    image = await buildSandboxImage(dockerd.dockerHost);
    keygen(join(dir, 'host_key'));
    keygen(join(dir, 'client'));
    keygen(join(dir, 'stranger'));
    writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client.pub')));
    // What `ssh-keyscan` would have added after a user checked the fingerprint; and a wrong one.
    const hostKey = readFileSync(join(dir, 'host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(join(dir, 'known_hosts'), `${net.nsIp} ${hostKey}\n`);
    const other = readFileSync(join(dir, 'stranger.pub'), 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(join(dir, 'wrong_known_hosts'), `${net.nsIp} ${other}\n`);
    mkdirSync('/run/sshd', { recursive: true }); // its privilege-separation folder
    writeFileSync(join(dir, 'sshd_config'), [
      `ListenAddress ${net.nsIp}`, 'Port 22', `HostKey ${join(dir, 'host_key')}`, `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`, 'PermitRootLogin prohibit-password', 'PasswordAuthentication no',
      'KbdInteractiveAuthentication no', 'UsePAM no', 'StrictModes no',
      // The session's docker CLI talks to the private engine, as DOCKER_HOST on a real host would say.
      `SetEnv DOCKER_HOST=${dockerd.dockerHost}`,
    ].join('\n') + '\n');
    sshd = spawn('nsenter', [`--net=/run/netns/${net.name}`, SSHD, '-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    sshd.stderr!.on('data', (d) => { sshdLog += d; });
    await listening(net.nsIp, 22).catch((err) => { throw new Error(`${err.message}: ${sshdLog}`); });
    url = `ssh://root@${net.nsIp}`;
    proxy = await startScriptedProxy(() => ({ text: 'hello over ssh' }));
    socketPath = join(proxy.dir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }, 150_000);

  afterAll(async () => {
    await proxy?.close();
    if (proxy) rmSync(proxy.dir, { recursive: true, force: true });
    if (sshd?.pid && sshd.exitCode === null) sshd.kill('SIGTERM');
    await dockerd?.stop();
    net?.remove();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const spec = (rolloutId: string): SandboxSpec => ({ runId, rolloutId, limits: { pids: 64 }, modelEndpoint: { socketPath, url: proxy.url } });

  it('runs sandboxes on the engine behind the ssh server: commands, files and model calls, two at once', async () => {
    const provider = new DockerSandboxProvider({ hosts: [{ url, sshKey: join(dir, 'client'), sshKnownHosts: join(dir, 'known_hosts') }], image, warmPool: 0 });
    try {
      const boxes = await Promise.all(['a', 'b'].map((id) => provider.create(spec(id))));
      try {
        await Promise.all(boxes.map(async (sb, i) => {
          await sb.writeFile('in.txt', `from the host ${i}`);
          expect(await sb.exec(['sh', '-c', 'id -u; cat in.txt'])).toMatchObject({ exitCode: 0, stdout: `1000\nfrom the host ${i}` });
          const id = ['a', 'b'][i]!;
          const { apiKey } = proxy.proxy.openSession(id);
          const script = `fetch(process.env.BASE + '/v1/chat/completions', { method: 'POST',
            headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.KEY },
            body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) })
            .then(async (r) => { const j = await r.json(); console.log(r.status, j.choices?.[0]?.message?.content ?? JSON.stringify(j)); })
            .catch((e) => { console.log('failed', e.cause?.code ?? e.message); process.exit(1); });`;
          const r = await sb.exec(['node', '-e', script], { env: { BASE: sb.modelBaseUrl, KEY: apiKey }, timeoutMs: 20_000 });
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
    const local = new DockerSandboxProvider({ socketPath: dockerd!.socketPath, image, warmPool: 0 });
    expect(await local.docker.listContainers({ all: true, filters: { label: [`clawgym.run=${runId}`] } })).toEqual([]);
    await local.close();
  });

  it('keeps its ssh connection and dial-stdio channels for the next requests', async () => {
    // dockerode's own ssh transport logged in and started `docker system dial-stdio` for every
    // request (~0.2 s each here); the agent keeps both, as HTTP keep-alive keeps a TCP connection.
    const provider = new DockerSandboxProvider({ hosts: [{ url, sshKey: join(dir, 'client'), sshKnownHosts: join(dir, 'known_hosts') }], image, warmPool: 0 });
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

  it('refuses a key the server does not know, and a server whose host key known_hosts does not list, saying which', async () => {
    const stranger = new DockerSandboxProvider({ hosts: [{ url, sshKey: join(dir, 'stranger'), sshKnownHosts: join(dir, 'known_hosts') }], image, warmPool: 0 });
    try {
      await expect(stranger.create(spec('stranger'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: `Docker host ${url} refused our ssh key (All configured authentication methods failed)`,
        hint: expect.stringContaining('authorized_keys'),
      });
    } finally {
      await stranger.close().catch(() => undefined);
    }
    // The right login, but the host presents a key other than the one known_hosts lists (a man in the middle, or a reinstall).
    const impostor = new DockerSandboxProvider({ hosts: [{ url, sshKey: join(dir, 'client'), sshKnownHosts: join(dir, 'wrong_known_hosts') }], image, warmPool: 0 });
    try {
      await expect(impostor.create(spec('impostor'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: expect.stringMatching(new RegExp(`^Docker host ${url} presented a host key that its known_hosts entry does not list`)),
      });
    } finally {
      await impostor.close().catch(() => undefined);
    }
    // Neither made a container there.
    const local = new DockerSandboxProvider({ socketPath: dockerd!.socketPath, image, warmPool: 0 });
    expect(await local.docker.listContainers({ all: true, filters: { label: [`clawgym.run=${runId}`] } })).toEqual([]);
    await local.close();
  });
});
