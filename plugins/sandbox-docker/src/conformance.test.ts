import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf, describeSandboxConformance, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from './dockerd';
import { DockerSandboxProvider } from './provider';

// The escape suite against Docker sandboxes, on a private dockerd of this test's own.
describeIf(dockerdMissing(), 'docker sandbox', () => {
  let dockerd: PrivateDockerd | undefined;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>> | undefined;
  let socketDir = '';
  describeSandboxConformance('docker', async () => {
    dockerd = await startDockerd();
    const image = await buildSandboxImage(dockerd.dockerHost);
    proxy = await startScriptedProxy(() => ({ text: 'ok' }));
    socketDir = mkdtempSync(join(tmpdir(), 'clawgym-docker-conformance-'));
    const socketPath = join(socketDir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
    return { provider: new DockerSandboxProvider({ socketPath: dockerd.socketPath, image }), socketPath, url: proxy.url, node: 'node' };
  }, { timeoutMs: 60_000 }, async () => {
    await proxy?.close();
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    await dockerd?.stop();
  });
});
