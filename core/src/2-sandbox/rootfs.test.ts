import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Harness } from '../contracts/harness';
import { checkClisInSandbox } from '../doctor/cli-in-sandbox';
import { cliVersion } from '../3-harness/helpers';
import { bubblewrapMissing, describeIf } from '../testing/harnesses';
import { localSandboxProvider } from './local';

/** The OpenClaw image's root filesystem, as scripts/openclaw-image.sh leaves it. */
const ROOTFS = join(process.env.CLAWGYM_IMAGE_CACHE ?? join(homedir(), '.cache', 'clawgym', 'images'), 'openclaw-1', 'rootfs');

/**
 * Needs the root filesystem scripts/openclaw-image.sh builds (about 200 s and 1.4 GB the first
 * time, cached after): scripts/setup-tests.sh builds it, so the README's test command and CI run
 * this; elsewhere it skips visibly, saying how to build it (in CI it fails instead).
 */
const missing = bubblewrapMissing()
  ?? (existsSync(join(ROOTFS, '.clawgym-complete')) ? undefined : `the OpenClaw root filesystem is not built at ${ROOTFS} (bash scripts/openclaw-image.sh, or bash scripts/setup-tests.sh)`);

describe('the local sandbox\'s rootfs option', () => {
  it('refuses a folder that holds no system, saying how to build the image\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'not-a-rootfs-'));
    try {
      const provider = localSandboxProvider({ rootfs: dir, root: join(dir, 'boxes') });
      await expect(provider.create({ runId: 'r', rolloutId: 'a', limits: {}, modelEndpoint: { url: 'http://127.0.0.1:9', socketPath: join(dir, 's.sock') } }))
        .rejects.toMatchObject({ code: 'CLAWGYM_SANDBOX_SPEC_INVALID', hint: expect.stringContaining('bash scripts/openclaw-image.sh') });
      await expect(localSandboxProvider({ rootfs: dir }).create({ runId: 'r', rolloutId: 'a', limits: {}, modelEndpoint: { url: 'http://127.0.0.1:9', socketPath: join(dir, 's.sock') } }))
        .rejects.toThrow(`sandbox option rootfs ${dir} is not a root filesystem (no usr/bin and etc in it)`);
      expect(provider.systemOf?.()).toBe(`root filesystem ${dir}`);
      expect(localSandboxProvider({}).systemOf?.()).toBeUndefined();
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});

describeIf(missing, 'the local sandbox on the OpenClaw root filesystem', () => {
  let dir: string;
  let server: Server;
  let socketPath: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rootfs-test-'));
    socketPath = join(dir, 'model.sock');
    server = createServer((c) => c.end());
    await new Promise<void>((ok) => server.listen(socketPath, () => ok()));
  });
  afterAll(async () => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs commands on the image\'s system (Debian bookworm, its Python, the OpenClaw and Claude Code CLIs), read-only, with the workspace at the task\'s path', async () => {
    const provider = localSandboxProvider({ rootfs: ROOTFS, root: join(dir, 'boxes') });
    const box = await provider.create({ runId: 'rootfs', rolloutId: 'a', limits: { wallMs: 120_000 }, modelEndpoint: { url: 'http://127.0.0.1:9', socketPath }, workspacePath: '/root/.openclaw/workspace' });
    try {
      const sh = (script: string) => box.exec(['sh', '-c', script], { timeoutMs: 60_000 });
      const os = await sh('cat /etc/os-release');
      expect(os.stdout).toContain('VERSION_CODENAME=bookworm');
      // Not the host's: this machine's own /etc/os-release says otherwise, or is the same release only by chance.
      expect(os.stdout).toBe(readFileSync(join(ROOTFS, 'etc', 'os-release'), 'utf8'));
      expect((await sh('python3 -c "import sys, yaml; print(sys.version_info[:2])"')).stdout).toBe('(3, 11)\n');
      expect(await sh('openclaw --version')).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/\d+\.\d+\.\d+/) });
      expect(await sh('claude --version')).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/\d+\.\d+\.\d+/) });
      expect((await sh('touch /usr/x')).exitCode).not.toBe(0);
      expect(await sh('pwd && echo out > made.txt')).toMatchObject({ exitCode: 0, stdout: '/root/.openclaw/workspace\n' });
      expect(readFileSync(join(box.workspaceHostPath, 'made.txt'), 'utf8')).toBe('out\n');
    } finally {
      await box.destroy();
      await provider.close();
    }
  }, 120_000);

  it('clawgym doctor finds the CLIs in the root filesystem, through a sandbox on it', async () => {
    const provider = localSandboxProvider({ rootfs: ROOTFS, root: join(dir, 'boxes') });
    const harness = (name: string, bin: string) => ({ name, version: (_o: Record<string, unknown>, run?: Parameters<typeof cliVersion>[1]) => cliVersion([bin, '--version'], run) }) as unknown as Harness;
    try {
      const [openclaw, absent] = await checkClisInSandbox(provider, provider.systemOf!()!, [
        { harness: harness('openclaw', 'openclaw'), options: {} },
        { harness: harness('codex', 'codex'), options: {} },
      ]);
      expect(openclaw).toMatchObject({ ok: true, reason: expect.stringMatching(new RegExp(`^openclaw \\d+\\.\\d+\\.\\d+\\S* inside the sandbox \\(root filesystem ${ROOTFS}\\)$`)) });
      expect(absent).toMatchObject({ ok: false, reason: expect.stringContaining('codex does not answer --version inside the sandbox') });
    } finally { await provider.close(); }
  }, 120_000);
});
