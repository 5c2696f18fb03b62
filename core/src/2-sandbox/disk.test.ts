import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../contracts/sandbox';
import { ClawGymError } from '../errors';
import { bubblewrapMissing, describeIf } from '../testing/harnesses';
import { parseDiskLimit } from './disk';
import { localSandboxProvider, type LocalSandboxOptions, type LocalSandboxProvider } from './local';

const MiB = 1024 * 1024;

/** Mount points at or under `dir`, read from /proc/self/mounts independently of disk.ts. */
function mountsAt(dir: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((p) => p === dir || p.startsWith(`${dir}/`));
}

/** Free bytes of the host file system that holds `dir`. */
const freeBytes = (dir: string) => { const s = statfsSync(dir); return s.bavail * s.bsize; };

// Mounting a tmpfs needs root (and CAP_SYS_ADMIN): without it the limit is reported as not
// enforced, which the last block checks instead.
const asRoot = process.getuid?.() === 0;
const notRoot = asRoot ? undefined : 'the disk limit is mounted as root only';

describe('parseDiskLimit (the diskLimit sandbox option)', () => {
  it('reads sizes with units, numbers as MiB, false and 0 as no limit, 1 GiB by default', () => {
    expect(parseDiskLimit(undefined)).toBe(1024 * MiB);
    expect(parseDiskLimit('512m')).toBe(512 * MiB);
    expect(parseDiskLimit('1.5G')).toBe(1.5 * 1024 * MiB);
    expect(parseDiskLimit('2GiB')).toBe(2048 * MiB);
    expect(parseDiskLimit(64)).toBe(64 * MiB);
    expect(parseDiskLimit(false)).toBeUndefined();
    expect(parseDiskLimit(0)).toBeUndefined();
  });
  it('refuses what is not a size of at least 1 MiB', () => {
    for (const bad of ['lots', '-1g', '10k', '1x', -5]) expect(() => parseDiskLimit(bad)).toThrow(ClawGymError);
    expect(() => parseDiskLimit('lots')).toThrow(/diskLimit "lots" is not a size/);
  });
});

function diskSuite(name: string, options: LocalSandboxOptions): void {
  describeIf(notRoot ?? (options.forceFallback ? undefined : bubblewrapMissing()), name, () => {
    let root: string;
    let provider: LocalSandboxProvider;
    let socketPath: string;
    let sock: Server;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'clawgym-disk-'));
      provider = localSandboxProvider({ root, diskLimit: '16m', log: () => undefined, ...options });
      socketPath = join(root, 's.sock');
      sock = createServer((c) => { c.on('error', () => undefined); c.end(); });
      await new Promise<void>((r) => sock.listen(socketPath, () => r()));
    });
    afterAll(async () => {
      await provider.close();
      await provider.sweep();
      await new Promise<void>((r) => sock.close(() => r()));
      await rm(root, { recursive: true, force: true });
    });
    const create = (rolloutId: string): Promise<Sandbox> => provider.create({ runId: 'disk', rolloutId, limits: { wallMs: 60_000 }, modelEndpoint: { socketPath, url: 'http://unused' } });

    it('says how the disk limit is enforced', async () => {
      expect((await provider.limitEnforcement()).disk).toMatch(/^tmpfs of 16 MiB for workspace, HOME/);
      expect(await provider.describeIsolation()).toMatch(/disk tmpfs of 16 MiB/);
    });

    it('a write past the limit fails with ENOSPC inside; the host disk is untouched; nothing is left mounted', async () => {
      const before = freeBytes(root);
      const sb = await create('big');
      const dir = join(root, 'disk', 'big');
      // 200 MiB asked for, in the workspace and in HOME's tmp: each stops at the sandbox's 16 MiB.
      const r = await sb.exec(['sh', '-c', 'head -c 200M /dev/zero > big.bin; echo "ws=$?"; head -c 200M /dev/zero > "$HOME/tmp/big.bin"; echo "home=$?"']);
      expect(r.stdout).toMatch(/ws=[1-9]/);
      expect(r.stdout).toMatch(/home=[1-9]/);
      expect(r.stderr).toMatch(/No space left on device/);
      const size = statSync(join(sb.workspaceHostPath, 'big.bin')).size;
      expect(size).toBeLessThanOrEqual(16 * MiB);
      expect(size).toBeGreaterThan(8 * MiB); // the host reads what was written, where it always does
      // At most a few MiB of the host's disk went (others write beside this test), never 200 MiB.
      expect(before - freeBytes(root)).toBeLessThan(64 * MiB);
      expect(mountsAt(dir).length).toBeGreaterThan(0);
      await sb.destroy();
      await provider.settled();
      expect(existsSync(dir)).toBe(false);
      expect(mountsAt(dir)).toEqual([]);
      expect(mountsAt(root).filter((p) => !p.includes('/.pooled-'))).toEqual([]); // only the warm pool's slots
    }, 30_000);

    it('a sandbox that frees space can write again, and its own limit is not shared with another sandbox', async () => {
      const [a, b] = await Promise.all([create('a'), create('b')]);
      try {
        expect((await a.exec(['sh', '-c', 'head -c 12M /dev/zero > f && echo ok'])).stdout).toBe('ok\n');
        expect((await b.exec(['sh', '-c', 'head -c 12M /dev/zero > f && echo ok'])).stdout).toBe('ok\n');
        expect((await a.exec(['sh', '-c', 'head -c 12M /dev/zero > g; echo $?'])).stdout).not.toBe('0\n');
        expect((await a.exec(['sh', '-c', 'rm g f && head -c 12M /dev/zero > g && echo ok'])).stdout).toBe('ok\n');
      } finally { await Promise.all([a.destroy(), b.destroy()]); }
    }, 30_000);

    it('the sweep of a dead runner\'s sandbox unmounts its disk before removing the folder', async () => {
      const sb = await create('left');
      const dir = join(root, 'disk', 'left');
      expect(mountsAt(dir).length).toBeGreaterThan(0);
      // The runner as dead: its owner file names a process that has exited.
      const owner = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as Record<string, unknown>;
      const gone = spawnSync('true').pid;
      writeFileSync(join(dir, 'owner.json'), JSON.stringify({ ...owner, pid: gone }));
      const report = await localSandboxProvider({ root, log: () => undefined }).sweep('disk');
      expect(report.removed).toContain(dir);
      expect(mountsAt(dir)).toEqual([]);
      expect(existsSync(dir)).toBe(false);
      await sb.destroy();
    }, 30_000);

    it('closing the provider leaves nothing mounted (the warm pool\'s slots included)', async () => {
      await provider.close();
      expect(mountsAt(root)).toEqual([]);
    });
  });
}

diskSuite('disk limit: bubblewrap with a holder (/tmp too)', {});
diskSuite('disk limit: bubblewrap, one per command', { holder: false });
diskSuite('disk limit: fallback (plain processes)', { forceFallback: true, allowUnisolated: true });

describeIf(bubblewrapMissing(), 'disk limit: /tmp inside bubblewrap is the sandbox\'s limited disk', () => {
  it(asRoot ? 'a write to /tmp past the limit fails with ENOSPC' : 'a write to /tmp past the limit fails (bubblewrap\'s own tmpfs of that size)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'clawgym-disk-tmp-'));
    const provider = localSandboxProvider({ root, diskLimit: '8m', warmPool: 0, log: () => undefined });
    const socketPath = join(root, 's.sock');
    const sock = createServer((c) => c.end());
    await new Promise<void>((r) => sock.listen(socketPath, () => r()));
    try {
      const sb = await provider.create({ runId: 't', rolloutId: 'tmp', limits: {}, modelEndpoint: { socketPath, url: 'http://unused' } });
      const r = await sb.exec(['sh', '-c', 'head -c 100M /dev/zero > /tmp/big.bin; echo "tmp=$?"; ls -l /tmp/big.bin']);
      expect(r.stdout).toMatch(/tmp=[1-9]/);
      expect(r.stderr).toMatch(/No space left on device/);
      await sb.destroy();
    } finally {
      await provider.close();
      await new Promise<void>((r) => sock.close(() => r()));
      await rm(root, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('disk limit off (diskLimit: false)', () => {
  it('mounts nothing and says the limit is off', async () => {
    const root = mkdtempSync(join(tmpdir(), 'clawgym-disk-off-'));
    const provider = localSandboxProvider({ root, diskLimit: false, forceFallback: true, allowUnisolated: true, log: () => undefined });
    try {
      expect((await provider.limitEnforcement()).disk).toBe('not enforced: diskLimit is off');
      const sb = await provider.create({ runId: 'off', rolloutId: 'x', limits: {}, modelEndpoint: { url: 'http://127.0.0.1:9', socketPath: join(root, 'none.sock') } });
      expect(mountsAt(root)).toEqual([]);
      await sb.destroy();
    } finally {
      await provider.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
