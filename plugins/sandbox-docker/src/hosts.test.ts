/** The `hosts` option (checked, with coded errors) and the choice of host, against engines that are small HTTP servers. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerHost, DockerHosts, dockerClient, isUnreachable } from './hosts';
import { DockerSandboxProvider } from './provider';
import { SshDialAgent } from './ssh-dial';

const dir = mkdtempSync(join(tmpdir(), 'clawgym-hosts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the hosts option', () => {
  const refused = (hosts: unknown, pattern: RegExp) => {
    expect(() => DockerHosts.parse(hosts as never)).toThrow(expect.objectContaining({ code: 'CLAWGYM_DOCKER_HOST_INVALID', message: expect.stringMatching(pattern) }));
  };

  it('takes unix, tcp (plain or TLS) and ssh hosts, remote unless unix', () => {
    const pem = join(dir, 'x.pem');
    writeFileSync(pem, 'not really PEM, read as bytes');
    writeFileSync(join(dir, 'id'), 'key');
    writeFileSync(join(dir, 'known_hosts'), '[build-1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE35+QDOOSS/UNsB7m5iIyQPTqf3hw0wZ39s2U7mbmqZ\n');
    const hosts = DockerHosts.parse([
      'unix:///var/run/docker.sock', 'tcp://10.0.0.2:2375', { url: 'tcp://10.0.0.3:2376', tls: { ca: pem, cert: pem, key: pem } },
      { url: 'ssh://me@build-1:2222', sshKey: join(dir, 'id'), sshKnownHosts: join(dir, 'known_hosts') }, { url: 'unix:///mnt/remote.sock', local: false },
    ]);
    expect(hosts.list.map((h) => [h.url, h.local])).toEqual([
      ['unix:///var/run/docker.sock', true], ['tcp://10.0.0.2:2375', false], ['tcp://10.0.0.3:2376', false], ['ssh://me@build-1:2222', false], ['unix:///mnt/remote.sock', false],
    ]);
    const modem = (i: number) => (hosts.list[i]!.docker as unknown as { modem: Record<string, unknown> }).modem;
    expect(modem(0)).toMatchObject({ socketPath: '/var/run/docker.sock' });
    expect(modem(1)).toMatchObject({ host: '10.0.0.2', port: 2375, protocol: 'http' });
    expect(modem(2)).toMatchObject({ host: '10.0.0.3', port: 2376, protocol: 'https' });
    expect(modem(3)).toMatchObject({ host: 'build-1', port: 2222, protocol: 'http', agent: expect.any(SshDialAgent) });
    expect((modem(3).agent as unknown as { config: object }).config).toMatchObject({ host: 'build-1', port: 2222, username: 'me', privateKey: Buffer.from('key') });
  });

  it('refuses what it cannot use, naming the host and the field', () => {
    refused([], /empty/);
    refused(['http://h:2375'], /scheme must be unix:\/\/, tcp:\/\/ or ssh:\/\//);
    refused(['tcp://h'], /needs a host and a port/);
    refused(['tcp://h:2376'], /2376 is Docker's TLS port but no tls/);
    refused([{ url: 'tcp://h:2376', tls: { ca: join(dir, 'missing.pem'), cert: 'c', key: 'k' } }], /cannot read the TLS CA .*missing\.pem/);
    refused([{ url: 'unix:///s', tls: { ca: 'a', cert: 'b', key: 'c' } }], /tls is for tcp:\/\/ hosts/);
    refused([{ url: 'tcp://h:2375', sshKey: 'k' }], /sshKey is for ssh:\/\/ hosts/);
    refused([{ url: 'tcp://h:2375', sshKnownHosts: 'k' }], /sshKnownHosts is for ssh:\/\/ hosts/);
    // An ssh host whose key is not known: refused before any login, with how to add it.
    refused([{ url: 'ssh://me@build-9', sshKey: join(dir, 'id'), sshKnownHosts: join(dir, 'known_hosts') }], /build-9 is not in .*known_hosts: the host's key must be known/);
    refused([{ url: 'ssh://me@build-1', sshKey: join(dir, 'id'), sshKnownHosts: join(dir, 'known_hosts') }], /build-1 is not in/); // port 22 is another entry
    refused([{ url: 'ssh://me@build-1:2222', sshKey: join(dir, 'id'), sshKnownHosts: join(dir, 'none') }], /cannot read the known_hosts file .*none/);
    refused([{ url: 'tcp://h:2375', maxSandboxes: 0 }], /maxSandboxes must be a positive integer/);
    refused(['tcp://h:2375', 'tcp://h:2375'], /listed twice/);
    refused([{ nope: 1 }], /each host is a URL/);
    const agent = process.env.SSH_AUTH_SOCK;
    delete process.env.SSH_AUTH_SOCK;
    try { refused(['ssh://me@h'], /no sshKey and no ssh agent/); } finally { if (agent !== undefined) process.env.SSH_AUTH_SOCK = agent; }
    expect(() => new DockerSandboxProvider({ socketPath: '/s', hosts: ['unix:///s'] })).toThrow(expect.objectContaining({ code: 'CLAWGYM_DOCKER_HOST_INVALID' }));
  });
});

/** A Docker engine as far as the scheduler asks: `/_ping` and `/info`, on a Unix socket. */
async function fakeEngine(name: string, ncpu: number, pingDelayMs = 0): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  const socketPath = join(dir, `${name}.sock`);
  let server: Server | undefined;
  const start = () => new Promise<void>((resolve) => {
    rmSync(socketPath, { force: true });
    server = createServer((req, res) => {
      res.setHeader('content-type', req.url?.includes('/info') ? 'application/json' : 'text/plain');
      const answer = () => res.end(req.url?.includes('/info') ? JSON.stringify({ NCPU: ncpu }) : 'OK');
      if (pingDelayMs && req.url?.includes('/_ping')) setTimeout(answer, pingDelayMs); else answer();
    });
    server.listen(socketPath, resolve);
  });
  await start();
  return {
    url: `unix://${socketPath}`,
    start,
    stop: () => new Promise<void>((resolve) => { server!.closeAllConnections(); server!.close(() => resolve()); }),
  };
}

describe('choosing a host', () => {
  it('spreads by free capacity (NCPU or maxSandboxes), skips a host that stops answering, and takes it back once it answers', async () => {
    const big = await fakeEngine('big', 4);
    const small = await fakeEngine('small', 64);
    // A stopped engine fails at once (its socket is gone), so the time limit only has to be
    // generous: at 500 ms a loaded machine (a whole suite beside this one) missed /info once.
    const hosts = DockerHosts.parse([big.url, { url: small.url, maxSandboxes: 2 }], { probeMs: 100, probeTimeoutMs: 10_000 });
    try {
      const [b, s] = hosts.list as [DockerHost, DockerHost];
      // Six at once: 4 + 2 slots, each pick counted before the next one chooses.
      const picks = await Promise.all(Array.from({ length: 6 }, () => hosts.pick()));
      expect(picks.filter((h) => h === b)).toHaveLength(4);
      expect(picks.filter((h) => h === s)).toHaveLength(2);
      // Both full: over capacity, still the least loaded by share.
      b.inUse = 1;
      expect(await hosts.pick()).toBe(b);

      await big.stop();
      await hosts.probe();
      expect(b.healthy).toBe(false);
      expect(b.downSignal.aborted).toBe(true);
      for (let i = 0; i < 3; i++) expect(await hosts.pick()).toBe(s);
      await small.stop();
      await hosts.probe();
      await expect(hosts.pick()).rejects.toMatchObject({ code: 'CLAWGYM_DOCKER_HOST_UNREACHABLE', message: expect.stringContaining('no Docker host is answering') });

      await big.start();
      for (let i = 0; i < 40 && !b.healthy; i++) await new Promise((r) => setTimeout(r, 50));
      expect(b.healthy).toBe(true);
      expect(b.downSignal.aborted).toBe(false);
      expect(await hosts.pick()).toBe(b);
    } finally {
      hosts.close();
      await big.stop().catch(() => undefined);
      await small.stop().catch(() => undefined);
    }
  });

  it('a probe asked for after a host stopped finds it down, even while an earlier probe still waits on another host', async () => {
    // The earlier probe has the quick host's answer (up) and waits on the slow one; a probe that
    // joined it would report the quick host up after it stopped (the CI failure of the test above).
    const quick = await fakeEngine('quick', 4);
    const slow = await fakeEngine('slow', 4, 400);
    const hosts = DockerHosts.parse([quick.url, slow.url], { probeMs: 0, probeTimeoutMs: 5000 });
    try {
      const [q, w] = hosts.list as [DockerHost, DockerHost];
      const earlier = hosts.probe();
      await new Promise((r) => setTimeout(r, 100));
      await quick.stop();
      await hosts.probe();
      expect(q.healthy).toBe(false);
      expect(w.healthy).toBe(true);
      await earlier;
    } finally {
      hosts.close();
      await quick.stop().catch(() => undefined);
      await slow.stop().catch(() => undefined);
    }
  });

  it('tells a connection failure from an answer', () => {
    const { docker } = dockerClient({ url: 'tcp://127.0.0.1:1' });
    return docker.ping().then(() => { throw new Error('port 1 answered'); }, (err: unknown) => {
      expect(isUnreachable(err)).toBe(true);
      expect(isUnreachable(Object.assign(new Error('no such container'), { statusCode: 404 }))).toBe(false);
    });
  });
});
