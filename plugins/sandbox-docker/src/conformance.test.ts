import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf, describeSandboxConformance, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from './testing';
import { limitEnforcementHere } from './limits';
import { DockerSandboxProvider } from './provider';

// The escape suite against Docker sandboxes, on a private dockerd of this test's own.
describeIf(dockerdMissing(), 'docker sandbox', () => {
  let dockerd: PrivateDockerd | undefined;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>> | undefined;
  let socketDir = '';
  let provider: DockerSandboxProvider | undefined;
  // Decided when this file loads, from the kernel; the engine's own account is checked below.
  const limits = limitEnforcementHere();
  describeSandboxConformance('docker', async () => {
    dockerd = await startDockerd();
    const image = await buildSandboxImage(dockerd.dockerHost);
    proxy = await startScriptedProxy(() => ({ text: 'ok' }));
    socketDir = mkdtempSync(join(tmpdir(), 'clawgym-docker-conformance-'));
    const socketPath = join(socketDir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
    provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image });
    return { provider, socketPath, url: proxy.url, node: 'node' };
  }, { timeoutMs: 60_000, limits });
  // After the suite (its sandboxes are gone by then) and the check below.
  afterAll(async () => {
    await provider?.close();
    await proxy?.close();
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    await dockerd?.stop();
  }, 60_000);

  it('the engine enforces each limit as the kernel let this file expect', async () => {
    const { disk, ...engine } = await provider!.limitEnforcement();
    expect(engine).toEqual(limits);
    // The disk limit is the provider's own (tmpfs sizes), neither the kernel's nor the engine's: on by default.
    expect(disk).toMatch(/^tmpfs of 1 GiB for \/tmp and for \/var\/tmp; /);
  });
});
