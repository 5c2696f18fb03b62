/**
 * A Docker host over TCP with TLS, for real: a private dockerd in a network namespace of its own
 * serving `--tlsverify` on port 2376, with a CA, server and client certificates made here by
 * openssl. The provider reaches it only with the client certificate (`hosts: [{ url, tls }]`):
 * a sandbox runs commands and calls the model through the exec tunnel, all over TLS; a client
 * whose certificate another CA signed, one without a certificate and plain HTTP are refused.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '@clawgym/core';
import { describeIf, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, makeTestNetns, netnsMissing, startDockerd, type PrivateDockerd, type TestNetns } from './testing';
import { DockerSandboxProvider } from './provider';
import { callModelFrom } from './model-call-fixture';

jest.setTimeout(120_000);

const opensslMissing = () => (spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0 ? undefined : 'openssl is not installed (apt-get install openssl)');

/** Run openssl; a failure throws with what it printed. */
function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

/** A CA, and certificates it signs: `name-cert.pem` / `name-key.pem` with the given extensions. */
function makeCa(dir: string, ca: string) {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${ca}-key.pem`, '-out', `${ca}.pem`, '-days', '1', '-subj', `/CN=${ca}`]);
  return (name: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}-key.pem`, '-CAcreateserial', '-out', `${name}-cert.pem`, '-days', '1', '-extfile', `${name}.ext`]);
    return { cert: join(dir, `${name}-cert.pem`), key: join(dir, `${name}-key.pem`) };
  };
}

/** `GET /_ping` over HTTPS with only the CA (no client certificate): the error or the status. */
const pingWithoutClientCert = (host: string, port: number, ca: string) => new Promise<string>((done) => {
  const req = request({ host, port, path: '/_ping', ca: readFileSync(ca), timeout: 10_000 }, (res) => { res.resume(); done(`status ${res.statusCode}`); });
  req.on('error', (e: NodeJS.ErrnoException) => done(`error ${e.code ?? e.message}`));
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.end();
});

describeIf(dockerdMissing() ?? netnsMissing() ?? opensslMissing(), 'a Docker host over TCP with TLS (--tlsverify), in its own network namespace', () => {
  let net: TestNetns | undefined;
  let dockerd: PrivateDockerd | undefined;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let socketPath = '';
  let image = '';
  let url = '';
  const pki = mkdtempSync(join(tmpdir(), 'cgtls-'));
  const ca = join(pki, 'ca.pem');
  let client: { cert: string; key: string };
  let rogue: { cert: string; key: string };
  const runId = `tls${process.pid}`;

  beforeAll(async () => {
    net = makeTestNetns(2);
    const sign = makeCa(pki, 'ca');
    const server = sign('server', `subjectAltName=IP:${net.nsIp}\nextendedKeyUsage=serverAuth\n`);
    client = sign('client', 'extendedKeyUsage=clientAuth\n');
    rogue = makeCa(pki, 'rogue-ca')('rogue', 'extendedKeyUsage=clientAuth\n');
    dockerd = await startDockerd({ netns: net.name, tcp: `${net.nsIp}:2376`, tls: { ca, ...server } });
    url = `tcp://${net.nsIp}:2376`;
    image = await buildSandboxImage(dockerd.dockerHost); // over the daemon's own Unix socket
    proxy = await startScriptedProxy(() => ({ text: 'hello over tls' }));
    socketPath = join(proxy.dir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }, 150_000);

  afterAll(async () => {
    await proxy?.close();
    await dockerd?.stop();
    net?.remove();
    rmSync(pki, { recursive: true, force: true });
  }, 60_000);

  const spec = (rolloutId: string): SandboxSpec => ({ runId, rolloutId, limits: { pids: 64 }, modelEndpoint: { socketPath, url: proxy.url } });

  it('runs a sandbox through the TLS port with the client certificate: commands, files and a model call', async () => {
    const provider = new DockerSandboxProvider({ hosts: [{ url, tls: { ca, ...client } }], image, warmPool: 0 });
    try {
      const sb = await provider.create(spec('ok'));
      try {
        await sb.writeFile('in.txt', 'from the host');
        expect(await sb.exec(['sh', '-c', 'id -u; cat in.txt'])).toMatchObject({ exitCode: 0, stdout: '1000\nfrom the host' });
        const { apiKey } = proxy.proxy.openSession('ok');
        const r = await callModelFrom(sb, apiKey);
        expect(r.stdout.trim()).toBe('200 hello over tls');
        await proxy.proxy.closeSession('ok');
      } finally {
        await sb.destroy();
      }
      expect(await provider.describeIsolation()).toContain(`docker (${url} (remote: workspace by archive, model by exec tunnel) engine `);
      expect(await provider.check()).toMatchObject({ ok: true, reason: expect.stringMatching(new RegExp(`^${url}: engine \\d\\S*, image ${image}$`)) });
    } finally {
      await provider.close();
    }
  });

  it('refuses a client certificate from another CA, a client without one, and plain HTTP', async () => {
    const impostor = new DockerSandboxProvider({ hosts: [{ url, tls: { ca, ...rogue } }], image, warmPool: 0 });
    try {
      // What clawgym doctor shows for it.
      expect(await impostor.check()).toEqual({ ok: false, reason: expect.stringMatching(new RegExp(`^Docker host ${url} refused our TLS client certificate .*signed by the CA the engine trusts`)) });
      // A config error that says which side refused and what to check, not OpenSSL's text alone.
      await expect(impostor.create(spec('rogue'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: expect.stringMatching(new RegExp(`^Docker host ${url} refused our TLS client certificate \\(.*bad certificate`)),
        hint: expect.stringContaining('signed by the CA the engine trusts'),
      });
    } finally {
      await impostor.close().catch(() => undefined);
    }
    // The engine's certificate checked against a CA that did not sign it.
    const distrustful = new DockerSandboxProvider({ hosts: [{ url, tls: { ca: join(pki, 'rogue-ca.pem'), ...client } }], image, warmPool: 0 });
    try {
      await expect(distrustful.create(spec('distrust'))).rejects.toMatchObject({
        code: 'CLAWGYM_DOCKER_HOST_INVALID', message: expect.stringMatching(new RegExp(`^Docker host ${url}: its TLS certificate could not be verified \\(`)),
      });
    } finally {
      await distrustful.close().catch(() => undefined);
    }
    expect(await pingWithoutClientCert(net!.nsIp, 2376, ca)).toMatch(/^error /);
    const plain = await fetch(`http://${net!.nsIp}:2376/_ping`).then(async (r) => `${r.status} ${await r.text()}`, (e: Error & { cause?: { code?: string } }) => `error ${e.cause?.code ?? e.message}`);
    expect(plain).toMatch(/^400 Client sent an HTTP request to an HTTPS server/);
    // Nothing of the refused clients reached the engine.
    const provider = new DockerSandboxProvider({ hosts: [{ url, tls: { ca, ...client } }], image, warmPool: 0 });
    try {
      expect(await provider.docker.listContainers({ all: true, filters: { label: [`clawgym.run=${runId}`] } })).toEqual([]);
    } finally {
      await provider.close();
    }
  });
});
