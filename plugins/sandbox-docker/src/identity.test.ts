/**
 * The docker sandbox's identity for the run lock, on a private dockerd: an image rebuilt
 * differently under the same tag has another id, so `clawgym run --frozen` names it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf } from '@clawgym/core/testing';
import { DockerSandboxProvider } from './provider';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from './testing';

describeIf(dockerdMissing(), 'the docker sandbox\'s identity and usage', () => {
  let dockerd: PrivateDockerd;

  beforeAll(async () => { dockerd = await startDockerd(); }, 300_000);
  afterAll(async () => { await dockerd?.stop(); });

  /** Build `tag` from a Dockerfile given on stdin (no context, no registry: FROM scratch). */
  const build = (tag: string, dockerfile: string) => {
    const r = spawnSync('docker', ['build', '-q', '-t', tag, '-'], { input: dockerfile, env: { ...process.env, DOCKER_HOST: dockerd.dockerHost, DOCKER_BUILDKIT: '0' }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`docker build failed: ${r.stderr}`);
    return r.stdout.trim();
  };

  it('is the image\'s id, which changes when the tag is rebuilt differently, and says so when the image is missing', async () => {
    const provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image: 'clawgym-lock-test:1' });
    await expect(provider.identity()).rejects.toThrow(/clawgym-lock-test:1/);
    const first = build('clawgym-lock-test:1', 'FROM scratch\nLABEL build=one\n');
    expect(await provider.identity()).toEqual({ kind: 'image', ref: 'clawgym-lock-test:1', digest: first });
    const second = build('clawgym-lock-test:1', 'FROM scratch\nLABEL build=two\n');
    expect(second).not.toBe(first);
    expect((await provider.identity()).digest).toBe(second);
    await provider.close();
  }, 300_000);

  it('counts the CPU seconds of what ran in the container', async () => {
    const image = await buildSandboxImage(dockerd.dockerHost);
    const provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image });
    const root = mkdtempSync(join(tmpdir(), 'docker-usage-'));
    const socketPath = join(root, 'model.sock');
    // Nothing calls the model here; the sandbox only needs a socket to bind.
    const server = createServer((c) => c.destroy());
    await new Promise<void>((ok) => server.listen(socketPath, ok));
    const sb = await provider.create({ runId: 'usage', rolloutId: 'r1', limits: {}, modelEndpoint: { socketPath, url: 'http://unused' }, logDir: root });
    try {
      const idle = (await sb.usage!()).cpuSeconds!;
      const started = Date.now();
      const r = await sb.exec(['sh', '-c', 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done']);
      const wall = (Date.now() - started) / 1000;
      expect(r.exitCode).toBe(0);
      const used = (await sb.usage!()).cpuSeconds! - idle;
      expect(used).toBeGreaterThan(0.3 * wall);
      expect(used).toBeLessThanOrEqual(wall + 0.05);
    } finally {
      await sb.destroy();
      await provider.close();
      await provider.sweep('usage').catch(() => {});
      await new Promise<void>((ok) => server.close(() => ok()));
      rmSync(root, { recursive: true, force: true });
    }
  }, 300_000);
});
