import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf, startScriptedProxy } from '@clawgym/core/testing';
import { buildSandboxImage, dockerdMissing, startDockerd, type PrivateDockerd } from './testing';
import { DockerSandboxProvider } from './provider';

const MiB = 1024 * 1024;
/** Mount points under `dir`, read from /proc/self/mounts. */
const mountsUnder = (dir: string) => readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((p) => p.startsWith(`${dir}/`));
const freeBytes = (dir: string) => { const s = statfsSync(dir); return s.bavail * s.bsize; };

describeIf(dockerdMissing(), 'docker sandbox: disk limit', () => {
  let dockerd: PrivateDockerd;
  let provider: DockerSandboxProvider;
  let proxy: Awaited<ReturnType<typeof startScriptedProxy>>;
  let dir: string;
  let socketPath: string;
  const runId = `d${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    dockerd = await startDockerd();
    const image = await buildSandboxImage(dockerd.dockerHost);
    dir = mkdtempSync(join(tmpdir(), 'clawgym-docker-disk-'));
    provider = new DockerSandboxProvider({ socketPath: dockerd.socketPath, image, tmpDir: dir, diskLimit: '16m', warmPool: 0 });
    proxy = await startScriptedProxy(() => ({ text: 'ok' }));
    socketPath = join(dir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }, 300_000);

  afterAll(async () => {
    await provider?.close();
    await provider?.sweep(runId).catch(() => {});
    await proxy?.close();
    if (proxy) rmSync(proxy.dir, { recursive: true, force: true });
    await dockerd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a write past the limit fails with ENOSPC in the workspace, HOME and /tmp; the host disk is untouched; nothing stays mounted', async () => {
    const before = freeBytes(dir);
    const sb = await provider.create({ runId, rolloutId: 'big', limits: {}, modelEndpoint: { socketPath, url: proxy.url } });
    const r = await sb.exec(['sh', '-c', 'for t in big.bin "$HOME/big.bin" /tmp/big.bin /var/tmp/big.bin; do dd if=/dev/zero of="$t" bs=1048576 count=200; echo "$?"; done; rm -f "$HOME/big.bin"']);
    try {
      expect({ out: r.stdout.trim().split('\n'), err: r.stderr }).toEqual({ out: ['1', '1', '1', '1'], err: expect.stringMatching(/No space left on device/) });
      expect(r.stderr.match(/No space left on device/g)).toHaveLength(4);
      expect(statSync(join(sb.workspaceHostPath, 'big.bin')).size).toBeLessThanOrEqual(16 * MiB);
      expect(before - freeBytes(dir)).toBeLessThan(64 * MiB);
      expect(mountsUnder(dir).length).toBeGreaterThan(0);
    } finally { await sb.destroy(); }
    await provider.close();
    expect(mountsUnder(dir)).toEqual([]);
    expect((await provider.limitEnforcement()).disk).toBe('tmpfs of 16 MiB for /tmp and for /var/tmp; workspace and HOME (local engine) a tmpfs of 16 MiB');
  }, 120_000);
});
