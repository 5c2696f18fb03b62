import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { ClawGymError, ErrorCodes } from '../errors';
import { EXEC_OUTPUT_LIMIT_BYTES, execOutput, type ExecOptions, type ExecResult, type Sandbox, type SandboxProvider, type SandboxSpec } from '../contracts/sandbox';
import { refuseEnvironment } from './environment';
import { SANDBOX_PROXY_PORT } from './forwarder';
import { IP, NETNS_RUN } from './machine';
import { killGroup } from './marking';
import { hostFiles, SandboxPaths } from './paths';
import { startProcess } from './spawner';
import { stopWhen } from './stop';
import { refuseWorkspacePath } from './workspace-path';

export { SANDBOX_PROXY_PORT } from './forwarder';
export { netnsAvailable } from './machine';

/**
 * A sandbox whose only network is its own loopback, on which a forwarder reaches the proxy's
 * Unix socket: no traffic can leave. Files are not isolated (a temp workspace and HOME on the
 * host's filesystem) — bubblewrap and Docker sandboxes add that; host-side file operations
 * still refuse paths outside the workspace and HOME.
 */
export async function createNetnsSandbox(spec: SandboxSpec): Promise<Sandbox> {
  refuseEnvironment(spec, 'netns');
  refuseWorkspacePath(spec, 'netns', 'its files are not isolated: commands see the host\'s own folders');
  const socketPath = spec.modelEndpoint.socketPath;
  if (!socketPath) throw new ClawGymError(ErrorCodes.SANDBOX_SPEC_INVALID, 'the netns sandbox reaches the model through a Unix socket: spec.modelEndpoint.socketPath is required', { hint: 'listen on one with ServingProxy.listenUnix and pass its path' });
  const root = await mkdtemp(join(tmpdir(), `clawgym-${spec.runId}-${spec.rolloutId}-`));
  const workspace = join(root, 'workspace');
  const home = join(root, 'home');
  await mkdir(workspace);
  await mkdir(join(home, 'tmp'), { recursive: true });
  const paths = new SandboxPaths([{ inside: workspace, host: workspace }, { inside: home, host: home }], workspace);

  const exec = async (argv: string[], o: ExecOptions = {}): Promise<ExecResult> => {
    const env = { PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, TMPDIR: join(home, 'tmp'), LANG: 'C.UTF-8', ...spec.env, ...o.env };
    const cwd = o.cwd === undefined ? workspace : posix.resolve(workspace, o.cwd);
    // Own network, pid namespace and /proc: nothing outside to signal or read the environment of.
    const cmd = ['/usr/bin/unshare', '-n', '--pid', '--fork', '--kill-child', '--mount-proc', '/bin/sh', '-c', `${IP} link set lo up && exec "$0" "$@"`,
      process.execPath, NETNS_RUN, socketPath, String(SANDBOX_PROXY_PORT), cwd, '--', ...argv];
    const started = startProcess({ cmd, env, stdin: o.stdin ?? '', maxBytes: EXEC_OUTPUT_LIMIT_BYTES });
    const stop = stopWhen(o, () => { started.killed(); void started.pid.then((pid) => { if (pid) killGroup(pid); }); });
    const r = await started.done;
    stop.clear();
    return { exitCode: r.code, signal: r.signal, stdout: execOutput(r.stdout, r.outBytes), stderr: execOutput(r.stderr, r.errBytes) + (r.error ? `clawgym: cannot start ${cmd[0]}: ${r.error}\n` : ''), timedOut: stop.timedOut };
  };

  return {
    id: `${spec.runId}/${spec.rolloutId}`,
    workspaceHostPath: workspace,
    workspacePath: workspace,
    homePath: home,
    modelBaseUrl: `http://127.0.0.1:${SANDBOX_PROXY_PORT}/s/${spec.rolloutId}`,
    exec,
    ...hostFiles(paths),
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
