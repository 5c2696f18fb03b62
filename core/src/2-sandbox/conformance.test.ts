import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../config/load';
import { ErrorCodes } from '../errors';
import { provider } from '../kernel/create';
import { createKernel } from '../run/create-kernel';
import { bubblewrapMissing, describeIf, describeSandboxConformance, startScriptedProxy } from '../testing';
import { enforcementHere, localSandboxProvider as makeLocal, type LocalSandboxOptions, type LocalSandboxProvider } from './local';
import { netnsAvailable, netnsSandboxProvider } from './netns';

const providers: LocalSandboxProvider[] = [];
/** A local provider that is closed before the folders are removed (its warm pool's disks are mounted). */
const localSandboxProvider = (o: LocalSandboxOptions) => { const p = makeLocal(o); providers.push(p); return p; };
let proxy: Awaited<ReturnType<typeof startScriptedProxy>> | undefined;
const dirs: string[] = [];
let socketPath = '';
/** One proxy socket for every suite of this file. */
async function endpoint() {
  if (!proxy) {
    proxy = await startScriptedProxy(() => ({ text: 'ok' }));
    const dir = mkdtempSync(join(tmpdir(), 'conformance-sock-'));
    dirs.push(dir);
    socketPath = join(dir, 'proxy.sock');
    await proxy.proxy.listenUnix(socketPath);
  }
  return { socketPath, url: proxy.url };
}
afterAll(async () => {
  for (const p of providers) await p.close();
  await proxy?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const root = () => { const d = mkdtempSync(join(tmpdir(), 'conformance-root-')); dirs.push(d); return d; };

/** What plain processes on the host filesystem cannot block (why the fallback is refused by default). */
const NO_FILE_ISOLATION = 'no filesystem isolation without bubblewrap';
const filesOpen = { 'write-outside': NO_FILE_ISOLATION, 'read-other-workspace': NO_FILE_ISOLATION };

/**
 * How the local provider enforces each limit here, decided when this file loads. The suite's
 * cpus check is of a share: RLIMIT_CPU (a CPU-seconds budget, what is left without a cgroup)
 * is not one, and is checked in local.test.ts.
 */
function localLimits(options: { forceFallback?: boolean } = {}) {
  const e = enforcementHere(options);
  return { ...e, cpus: e.cpus.startsWith('cgroup') ? e.cpus : `not enforced: a CPU share needs a cgroup (here: ${e.cpus})` };
}

describeIf(bubblewrapMissing(), 'local sandbox with bubblewrap', () => {
  describeSandboxConformance('local (bubblewrap)', async () => ({ provider: localSandboxProvider({ root: root(), log: () => {} }), ...await endpoint() }), { limits: localLimits() });
});

describe('local sandbox without bubblewrap', () => {
  it('refuses to create a sandbox unless allowUnisolated says so, with the install hint', async () => {
    const provider = localSandboxProvider({ root: root(), forceFallback: true, log: () => {} });
    const err = await provider.create({ runId: 'r', rolloutId: 'x', limits: {}, modelEndpoint: { ...await endpoint() } }).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: ErrorCodes.SANDBOX_UNISOLATED, message: expect.stringContaining('cannot isolate files here (forceFallback is set)') });
    expect((err as { hint: string }).hint).toContain('apt-get install bubblewrap');
    expect((err as { hint: string }).hint).toContain("sandbox: { use: 'local', options: { allowUnisolated: true } }");
  });

  const ns = netnsAvailable();
  describeIf(ns.ok ? undefined : ns.reason, 'allowUnisolated, as root (own network, pid namespace and /proc)', () => {
    describeSandboxConformance('local (fallback, allowUnisolated)', async () => ({
      provider: localSandboxProvider({ root: root(), forceFallback: true, allowUnisolated: true, log: () => {} }), ...await endpoint(),
    }), { open: filesOpen, limits: localLimits({ forceFallback: true }), noWorkspacePath: 'without bubblewrap commands see the host\'s folders' });
  });
});

const ns = netnsAvailable();
describeIf(ns.ok ? undefined : ns.reason, 'netns sandbox (test kit)', () => {
  const networkOnly = 'the netns test kit isolates the network only and sets no limits';
  describeSandboxConformance('netns', async () => ({ provider: netnsSandboxProvider(), ...await endpoint() }), {
    open: filesOpen, unenforced: { pids: networkOnly, memory: networkOnly, cpus: networkOnly, wall: networkOnly },
    noWorkspacePath: 'its files are not isolated',
  });
});

describe("sandbox: { use: 'local', options } in the config", () => {
  const kernelFor = async (options: Record<string, unknown>) => {
    const kernel = await createKernel(resolveConfig({ sandbox: { use: 'local', options } }, { rootDir: tmpdir() }));
    return { kernel, sandboxes: await provider(kernel, 'sandbox', kernel.config.sandbox) };
  };
  const spec = async (rolloutId: string) => ({ runId: 'cfg', rolloutId, limits: {}, modelEndpoint: { ...await endpoint() } });

  it('configures the built-in local sandbox: allowUnisolated lets the fallback run, its absence refuses it', async () => {
    const refused = await kernelFor({ forceFallback: true, root: root() });
    await expect(refused.sandboxes.create(await spec('no'))).rejects.toMatchObject({ code: ErrorCodes.SANDBOX_UNISOLATED });
    await refused.kernel.dispose();
    const allowed = await kernelFor({ forceFallback: true, allowUnisolated: true, root: root() });
    const sb = await allowed.sandboxes.create(await spec('yes'));
    try {
      expect((await sb.exec(['/bin/echo', 'ran'])).stdout).toBe('ran\n');
    } finally {
      await sb.destroy();
      await allowed.kernel.dispose();
    }
  });

  it('refuses an unknown option with its path', async () => {
    await expect(kernelFor({ allowUnisolate: true })).rejects.toThrow(/sandbox\.options/);
  });
});
