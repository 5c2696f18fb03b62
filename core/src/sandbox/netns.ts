import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import type { ExecOptions, ExecResult, Sandbox, SandboxProvider, SandboxSpec } from '../contracts/sandbox';
import { refuseEnvironment } from './environment';

/** Port of the in-sandbox forwarder; every sandbox has its own loopback, so one port serves all. */
export const SANDBOX_PROXY_PORT = 4141;

const NETNS_RUN = resolve(__dirname, '..', '..', 'dist', 'sandbox', 'netns-run.js');

/** Whether this machine can run commands in a fresh network namespace (`unshare -n` and `ip`, as root). */
export function netnsAvailable(): { ok: boolean; reason?: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'network namespaces need root here (unshare -n)' };
  for (const bin of ['/usr/bin/unshare', '/usr/sbin/ip']) if (!existsSync(bin)) return { ok: false, reason: `${bin} is missing (apt-get install util-linux iproute2)` };
  if (!existsSync(NETNS_RUN)) return { ok: false, reason: `${NETNS_RUN} is missing: run npm run build` };
  return { ok: true };
}

/**
 * A sandbox whose only network is its own loopback, on which a forwarder reaches the proxy's
 * Unix socket: no traffic can leave. Files are not isolated (a temp workspace and HOME on the
 * host's filesystem) — bubblewrap and Docker sandboxes add that.
 */
export async function createNetnsSandbox(spec: SandboxSpec): Promise<Sandbox> {
  refuseEnvironment(spec, 'netns');
  const socketPath = spec.modelEndpoint.socketPath;
  if (!socketPath) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'the netns sandbox reaches the model through a Unix socket: spec.modelEndpoint.socketPath is required', { hint: 'listen on one with ServingProxy.listenUnix and pass its path' });
  const root = await mkdtemp(join(tmpdir(), `clawgym-${spec.runId}-${spec.rolloutId}-`));
  const workspace = join(root, 'workspace');
  const home = join(root, 'home');
  await mkdir(workspace);
  await mkdir(join(home, 'tmp'), { recursive: true });
  const inside = (p: string) => (p.startsWith('/') ? p : join(workspace, p));

  const exec = (argv: string[], o: ExecOptions = {}): Promise<ExecResult> => new Promise((done) => {
    const env = { PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, TMPDIR: join(home, 'tmp'), LANG: 'C.UTF-8', ...spec.env, ...o.env };
    // Own network, pid namespace and /proc: nothing outside to signal or read the environment of.
    const child = spawn('/usr/bin/unshare', ['-n', '--pid', '--fork', '--kill-child', '--mount-proc', '/bin/sh', '-c', 'ip link set lo up && exec "$0" "$@"',
      process.execPath, NETNS_RUN, socketPath, String(SANDBOX_PROXY_PORT), o.cwd ?? workspace, '--', ...argv], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const kill = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ } };
    const timer = o.timeoutMs ? setTimeout(() => { timedOut = true; kill(); }, o.timeoutMs) : undefined;
    o.signal?.addEventListener('abort', kill, { once: true });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ exitCode: code, signal, stdout, stderr, timedOut });
    });
    // A command that exits without reading its stdin closes the pipe (EPIPE): its exit says enough.
    child.stdin.on('error', () => undefined).end(o.stdin ?? '');
  });

  return {
    id: `${spec.runId}/${spec.rolloutId}`,
    workspaceHostPath: workspace,
    workspacePath: workspace,
    homePath: home,
    modelBaseUrl: `http://127.0.0.1:${SANDBOX_PROXY_PORT}/s/${spec.rolloutId}`,
    exec,
    async writeFile(path, data) {
      await mkdir(dirname(inside(path)), { recursive: true });
      await writeFile(inside(path), data);
    },
    async copyIn(hostPath, sandboxPath) { await cp(hostPath, inside(sandboxPath), { recursive: true }); },
    async copyOut(sandboxPath, hostPath) { await cp(inside(sandboxPath), hostPath, { recursive: true }); },
    async destroy() { await rm(root, { recursive: true, force: true }); },
  };
}

/**
 * Sandboxes isolated by network only (`createNetnsSandbox`): the minimum for running real
 * harnesses safely against the proxy in tests. Temp dirs are removed by `destroy`.
 */
export function netnsSandboxProvider(): SandboxProvider {
  return {
    name: 'netns',
    describeIsolation: async () => 'network and pid namespaces (only loopback; proxy via a Unix socket; own /proc); files NOT isolated',
    create: createNetnsSandbox,
    sweep: async () => ({ removed: [] }),
  };
}
