import { ClawGymError, collectOutput, ErrorCodes } from '@clawgym/core';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A `dockerd` started for tests or CI, with its own data, exec root and socket. */
export interface PrivateDockerd {
  /** Its API socket. */
  readonly socketPath: string;
  /** `unix://<socketPath>`, for `DOCKER_HOST`. */
  readonly dockerHost: string;
  readonly pid: number;
  /** Folder holding its data root, exec root, pidfile and log. */
  readonly root: string;
  readonly storageDriver: 'overlay2' | 'vfs';
  /** `tcp://<address>` when it listens on TCP. */
  readonly tcpHost?: string;
  /** Stop it by its PID (SIGTERM, then SIGKILL) and, unless `keep`, remove its folder. */
  stop(options?: { keep?: boolean }): Promise<void>;
}

export interface StartDockerdOptions {
  /** Folder for everything the daemon writes (default: a fresh temp folder). */
  root?: string;
  /** Storage drivers to try, in order (default overlay2, then vfs). */
  storageDrivers?: Array<'overlay2' | 'vfs'>;
  /** How long to wait for it to answer (default 60 s). */
  timeoutMs?: number;
  /** Run it in this network namespace (a name under /run/netns, e.g. from {@link makeTestNetns}). */
  netns?: string;
  /**
   * Also listen on this TCP address (`10.231.7.2:2375`): plain HTTP, only for a namespace the
   * test made, unless `tls` is given.
   */
  tcp?: string;
  /** With `tcp`: serve TLS and verify clients (`--tlsverify`), with these PEM files of the daemon's side. */
  tls?: { ca: string; cert: string; key: string };
}

function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Why a private dockerd cannot run here, or undefined when it can: tests skip with this
 * reason (and fail in CI). Also checks what `scripts/docker-image.sh` needs.
 */
export function dockerdMissing(): string | undefined {
  if (process.platform !== 'linux') return 'a private dockerd needs Linux';
  if (process.getuid?.() !== 0) return 'a private dockerd needs root';
  if (!onPath('dockerd')) return 'dockerd is not installed (apt-get install -y docker.io)';
  if (!onPath('docker')) return 'the docker CLI is not installed (apt-get install -y docker.io)';
  if (!onPath('busybox')) return 'busybox is not installed, needed by scripts/docker-image.sh (apt-get install -y busybox-static)';
  return undefined;
}

/** GET /_ping on a Docker API socket: true once the daemon answers OK. */
export function pingDocker(socketPath: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.on('error', () => resolve(false));
    req.end();
  });
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitExit(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  return !alive(pid);
}

/** Lazily unmount every mount point under `dir`, deepest first. */
function unmountUnder(dir: string): void {
  let mountinfo = '';
  try { mountinfo = readFileSync('/proc/self/mountinfo', 'utf8'); } catch { return; }
  const points = mountinfo.split('\n').map((l) => l.split(' ')[4]).filter((p): p is string => !!p)
    .map((p) => p.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const p of points) spawnSync('umount', ['-l', p], { stdio: 'ignore' });
}

/**
 * Start a private `dockerd`: own `--data-root`, `--exec-root`, socket and pidfile, no bridge
 * and no iptables changes (containers get `NetworkMode: none`), runc. Tries overlay2, then
 * vfs. Resolves once it answers `/_ping`.
 */
export async function startDockerd(options: StartDockerdOptions = {}): Promise<PrivateDockerd> {
  const missing = dockerdMissing();
  if (missing) throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, missing);
  // Short paths: containerd's socket lives under the exec root and Unix socket paths are
  // limited to 108 bytes.
  const root = options.root ?? await mkdtemp(join(tmpdir(), 'cgd-'));
  await mkdir(root, { recursive: true });
  const drivers = options.storageDrivers ?? ['overlay2', 'vfs'];
  const errors: string[] = [];
  for (const driver of drivers) {
    const socketPath = join(root, 'docker.sock');
    const pidfile = join(root, 'docker.pid');
    const logPath = join(root, `dockerd-${driver}.log`);
    const log = openSync(logPath, 'a');
    const args = [
      '--data-root', join(root, 'data'), '--exec-root', join(root, 'exec'),
      '-H', `unix://${socketPath}`, '--pidfile', pidfile,
      ...(options.tcp ? ['-H', `tcp://${options.tcp}`, ...(options.tls
        ? ['--tlsverify', '--tlscacert', options.tls.ca, '--tlscert', options.tls.cert, '--tlskey', options.tls.key]
        : ['--tls=false'])] : []),
      '--iptables=false', '--ip-masq=false', '--bridge=none',
      '--storage-driver', driver, '--default-runtime', 'runc',
    ];
    // nsenter enters only the network namespace and execs dockerd: the PID is dockerd's.
    const child = options.netns
      ? spawn('nsenter', [`--net=/run/netns/${options.netns}`, 'dockerd', ...args], { stdio: ['ignore', log, log], detached: true })
      : spawn('dockerd', args, { stdio: ['ignore', log, log], detached: true });
    closeSync(log);
    child.unref();
    const pid = child.pid;
    if (!pid) { errors.push(`${driver}: dockerd did not start`); continue; }
    let exited = false;
    child.once('exit', () => { exited = true; });
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    let up = false;
    while (!exited && Date.now() < deadline) {
      if (existsSync(socketPath) && await pingDocker(socketPath)) { up = true; break; }
      await sleep(100);
    }
    if (up) {
      let stopped: Promise<void> | undefined;
      return {
        socketPath, dockerHost: `unix://${socketPath}`, pid, root, storageDriver: driver, tcpHost: options.tcp ? `tcp://${options.tcp}` : undefined,
        stop({ keep = false } = {}) {
          stopped ??= (async () => {
            if (alive(pid)) {
              process.kill(pid, 'SIGTERM');
              if (!await waitExit(pid, 20_000)) {
                process.kill(pid, 'SIGKILL');
                await waitExit(pid, 5_000);
              }
            }
            unmountUnder(root); // dockerd leaves exec/netns/default mounted
            if (!keep && !options.root) await rm(root, { recursive: true, force: true });
          })();
          return stopped;
        },
      };
    }
    if (alive(pid)) { process.kill(pid, 'SIGKILL'); await waitExit(pid, 5_000); }
    unmountUnder(root);
    const tail = existsSync(logPath) ? readFileSync(logPath, 'utf8').trim().split('\n').slice(-3).join(' | ') : '';
    errors.push(`${driver}: ${exited ? 'dockerd exited' : 'no answer in time'}${tail ? ` (${tail})` : ''}`);
  }
  if (!options.root) await rm(root, { recursive: true, force: true });
  throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, `could not start a private dockerd: ${errors.join('; ')}`, { hint: 'its log is in the folder named above' });
}

/** A network namespace a test made, joined to this one by a veth pair. */
export interface TestNetns {
  readonly name: string;
  /** This side's address on the veth. */
  readonly hostIp: string;
  /** The address inside the namespace. */
  readonly nsIp: string;
  /** Delete the namespace (its end of the veth goes with it) and this side's end. */
  remove(): void;
}

/** Why test network namespaces cannot be made here, or undefined when they can. */
export function netnsMissing(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  if (!onPath('ip')) return 'ip (iproute2) is not installed';
  if (!onPath('nsenter')) return 'nsenter (util-linux) is not installed';
  return undefined;
}

function ip(args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, `ip ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
}

/**
 * A network namespace with a veth to this one, on 10.231.<subnet>.<4k+1 | 4k+2>/30 (`index` picks
 * k): a "machine" a test can put a Docker engine in and reach only over that link.
 */
export function makeTestNetns(index: number, subnet = 1 + (process.pid % 250)): TestNetns {
  const missing = netnsMissing();
  if (missing) throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, missing);
  const tag = `${process.pid.toString(36)}${index}`;
  const name = `cgh-${tag}`;
  const outer = `cgh${tag}h`.slice(0, 15);
  const inner = `cgh${tag}n`.slice(0, 15);
  const hostIp = `10.231.${subnet}.${4 * index + 1}`;
  const nsIp = `10.231.${subnet}.${4 * index + 2}`;
  const remove = () => {
    spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    spawnSync('ip', ['link', 'del', outer], { stdio: 'ignore' });
  };
  try {
    ip(['netns', 'add', name]);
    ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner]);
    ip(['link', 'set', inner, 'netns', name]);
    ip(['addr', 'add', `${hostIp}/30`, 'dev', outer]);
    ip(['link', 'set', outer, 'up']);
    ip(['-n', name, 'addr', 'add', `${nsIp}/30`, 'dev', inner]);
    ip(['-n', name, 'link', 'set', inner, 'up']);
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
  } catch (err) {
    remove();
    throw err;
  }
  return { name, hostIp, nsIp, remove };
}

/**
 * Build (or reuse) the sandbox image with `scripts/docker-image.sh` against the daemon at
 * `dockerHost`; resolves to its tag.
 */
export async function buildSandboxImage(dockerHost: string, options: { script?: string; image?: string; force?: boolean } = {}): Promise<string> {
  const script = options.script ?? join(__dirname, '..', '..', '..', '..', 'scripts', 'docker-image.sh');
  const env: Record<string, string> = { ...process.env as Record<string, string>, DOCKER_HOST: dockerHost, FORCE: options.force ? '1' : '0' };
  if (options.image) env.IMAGE = options.image;
  const r = await collectOutput(['bash', script], { env });
  const tag = r.stdout.toString('utf8').trim().split('\n').pop();
  if (r.code === 0 && tag) return tag;
  throw new ClawGymError(ErrorCodes.IMAGE_BUILD_FAILED, `${script} failed (${r.error ?? r.code ?? r.signal}): ${r.stderr.toString('utf8').trim().slice(-2000)}`);
}

const SSHD = '/usr/sbin/sshd';

/** Why {@link startTestSshd} cannot run here, or undefined. */
export function sshdMissing(): string | undefined {
  if (spawnSync(SSHD, ['-V'], { stdio: 'ignore' }).error || spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error) return 'OpenSSH is not installed (apt-get install openssh-server)';
  return undefined;
}

/** An OpenSSH server made by {@link startTestSshd}. */
export interface TestSshd {
  /** `ssh://root@<address>`. */
  url: string;
  /** The client's private key file (its public half is authorised), and a known_hosts file listing the server's key. */
  clientKey: string;
  knownHosts: string;
  /** Folder of its keys and config. */
  dir: string;
  pid: number;
  stop(): Promise<void>;
}

/** A passphrase-less ed25519 key pair at `file` and `file.pub`, made by ssh-keygen (for tests). */
export function sshKeygen(file: string): void {
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, `ssh-keygen: ${r.stderr}`);
}

/**
 * An OpenSSH server in a test namespace (from {@link makeTestNetns}), listening on its address
 * only, with a host key, one authorised client key and `SetEnv DOCKER_HOST=<dockerHost>`: its
 * sessions' `docker system dial-stdio` reaches that engine, as on a real Docker host reached
 * with `ssh://`. Root logs in with the key only. Stopped (by PID) with `stop()`.
 */
export async function startTestSshd(netns: TestNetns, dockerHost: string, o: { port?: number; timeoutMs?: number } = {}): Promise<TestSshd> {
  const port = o.port ?? 22;
  const timeoutMs = o.timeoutMs ?? 20_000;
  const missing = sshdMissing();
  if (missing) throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, missing);
  const dir = await mkdtemp(join(tmpdir(), 'cgssh-'));
  sshKeygen(join(dir, 'host_key'));
  sshKeygen(join(dir, 'client'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client.pub')));
  // What `ssh-keyscan` would have added after a user checked the fingerprint.
  const hostKey = readFileSync(join(dir, 'host_key.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  writeFileSync(join(dir, 'known_hosts'), `${port === 22 ? netns.nsIp : `[${netns.nsIp}]:${port}`} ${hostKey}\n`);
  mkdirSync('/run/sshd', { recursive: true }); // its privilege-separation folder
  writeFileSync(join(dir, 'sshd_config'), [
    `ListenAddress ${netns.nsIp}`, `Port ${port}`, `HostKey ${join(dir, 'host_key')}`, `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`, 'PermitRootLogin prohibit-password', 'PasswordAuthentication no',
    'KbdInteractiveAuthentication no', 'UsePAM no', 'StrictModes no', 'MaxSessions 10', `SetEnv DOCKER_HOST=${dockerHost}`,
  ].join('\n') + '\n');
  const logPath = join(dir, 'sshd.log');
  const log = openSync(logPath, 'a');
  const child = spawn('nsenter', [`--net=/run/netns/${netns.name}`, SSHD, '-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', log, log], detached: true });
  closeSync(log);
  child.unref();
  const pid = child.pid;
  const stop = async () => {
    if (pid && alive(pid)) { process.kill(pid, 'SIGTERM'); if (!await waitExit(pid, 5_000)) process.kill(pid, 'SIGKILL'); }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const up = await new Promise<boolean>((done) => { const s = netConnect(port, netns.nsIp, () => { s.destroy(); done(true); }); s.on('error', () => done(false)); });
    if (up && pid) return { url: `ssh://root@${netns.nsIp}${port === 22 ? '' : `:${port}`}`, clientKey: join(dir, 'client'), knownHosts: join(dir, 'known_hosts'), dir, pid, stop };
    if (Date.now() > deadline || !pid || !alive(pid)) {
      const text = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
      await stop();
      throw new ClawGymError(ErrorCodes.DOCKERD_FAILED, `sshd did not listen on ${netns.nsIp}:${port}: ${text.slice(-1000)}`);
    }
    await sleep(100);
  }
}
