/**
 * Many Docker engines behind one `docker` sandbox provider: what each host is (a Unix socket, TCP
 * with or without TLS, `ssh://`), how many sandboxes it takes, whether it answers, and which one
 * gets the next sandbox (the most free capacity among the hosts that answer).
 *
 * A host that stops answering (a request fails at the connection, or its `/_ping` probe does) is
 * marked down: its sandboxes in flight are told (their commands end as infra errors, which the
 * runner retries, and the provider places the retry on another host), and it gets no sandbox
 * until a probe finds it answering again.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ClawGymError, ErrorCodes } from '@clawgym/core';
import Docker from 'dockerode';
import { knownHostKeys, knownHostsName } from './known-hosts';
import { SshDialAgent } from './ssh-dial';

/** One Docker engine of the `hosts` option, spelled out. */
export interface DockerHostOption {
  /** `unix:///run/docker.sock`, `tcp://10.0.0.2:2376` or `ssh://user@host[:port]`. */
  url: string;
  /** For `tcp://`: PEM files of the CA, the client certificate and its key (Docker's `--tlsverify` setup). */
  tls?: { ca: string; cert: string; key: string };
  /** For `ssh://`: the private key file (default: the ssh agent at `SSH_AUTH_SOCK`). */
  sshKey?: string;
  /**
   * For `ssh://`: the known_hosts file that must list the host's key (default
   * `~/.ssh/known_hosts`, as the ssh client reads it); a host it does not list is refused, and
   * a host that presents another key fails its handshake, as `StrictHostKeyChecking yes` does.
   */
  sshKnownHosts?: string;
  /**
   * For `ssh://`: the engine's socket on that host (`/var/run/docker.sock`). Given, requests go
   * over channels forwarded to it (sshd's `AllowStreamLocalForwarding`, on by default), which
   * start no process there; by default, `docker system dial-stdio`, as the Docker CLI does.
   */
  sshDockerSocket?: string;
  /** Most sandboxes at once on this host (default: the engine's `NCPU`). */
  maxSandboxes?: number;
  /**
   * Whether the engine sees this machine's filesystem, so the provider may bind-mount folders
   * and the proxy's socket (default: true for `unix://`, false for `tcp://` and `ssh://`).
   * A host that is not local gets the workspace through the archive API and the model through
   * a tunnel over a `docker exec` stream.
   */
  local?: boolean;
}

/** A host as written in the config: the URL alone, or spelled out. */
export type DockerHostSpec = string | DockerHostOption;

/** Health probing of the hosts. */
export interface DockerHostsOptions {
  /** How often every host's `/_ping` is probed (default 2000 ms; 0: only after a failure). */
  probeMs?: number;
  /** How long a probe or a first `/info` may take before the host counts as not answering (default 3000 ms). */
  probeTimeoutMs?: number;
}

function invalid(message: string, hint?: string): ClawGymError {
  return new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, message, { hint: hint ?? "hosts: ['unix:///var/run/docker.sock', { url: 'tcp://10.0.0.2:2376', tls: { ca, cert, key } }, 'ssh://user@host']" });
}

function readPem(path: string, what: string, url: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw invalid(`${url}: cannot read the TLS ${what} ${path}: ${(err as Error).message}`);
  }
}

/** The dockerode client for a host, after checking what the option says. */
export function dockerClient(o: DockerHostOption): { docker: Docker; local: boolean; agent?: SshDialAgent } {
  let u: URL;
  try {
    u = new URL(o.url);
  } catch {
    throw invalid(`"${o.url}" is not a Docker host URL`);
  }
  if (o.maxSandboxes !== undefined && !(Number.isInteger(o.maxSandboxes) && o.maxSandboxes > 0)) throw invalid(`${o.url}: maxSandboxes must be a positive integer, got ${o.maxSandboxes}`);
  if (o.tls && u.protocol !== 'tcp:') throw invalid(`${o.url}: tls is for tcp:// hosts`);
  if (o.sshKey && u.protocol !== 'ssh:') throw invalid(`${o.url}: sshKey is for ssh:// hosts`);
  if (o.sshKnownHosts && u.protocol !== 'ssh:') throw invalid(`${o.url}: sshKnownHosts is for ssh:// hosts`);
  if (o.sshDockerSocket !== undefined && u.protocol !== 'ssh:') throw invalid(`${o.url}: sshDockerSocket is for ssh:// hosts`);
  if (o.sshDockerSocket !== undefined && !o.sshDockerSocket.startsWith('/')) throw invalid(`${o.url}: sshDockerSocket must be an absolute path on that host, got ${JSON.stringify(o.sshDockerSocket)}`, "sshDockerSocket: '/var/run/docker.sock'");
  switch (u.protocol) {
    case 'unix:': {
      const socketPath = decodeURIComponent(u.pathname);
      if (!socketPath.startsWith('/')) throw invalid(`${o.url}: a unix:// host needs an absolute socket path (unix:///run/docker.sock)`);
      return { docker: new Docker({ socketPath }), local: o.local ?? true };
    }
    case 'tcp:': {
      if (!u.hostname || !u.port) throw invalid(`${o.url}: a tcp:// host needs a host and a port (tcp://10.0.0.2:2376)`);
      if (u.pathname && u.pathname !== '/') throw invalid(`${o.url}: a tcp:// host has no path`);
      const tls = o.tls ? { ca: readPem(o.tls.ca, 'CA', o.url), cert: readPem(o.tls.cert, 'certificate', o.url), key: readPem(o.tls.key, 'key', o.url) } : undefined;
      if (!tls && u.port === '2376') throw invalid(`${o.url}: port 2376 is Docker's TLS port but no tls files are given`, "add tls: { ca, cert, key } (PEM files), or use the engine's plain port");
      const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
      return { docker: new Docker({ host, port: Number(u.port), protocol: tls ? 'https' : 'http', ...tls }), local: o.local ?? false };
    }
    case 'ssh:': {
      if (!u.hostname) throw invalid(`${o.url}: an ssh:// host needs a host name`);
      const privateKey = o.sshKey ? readPem(o.sshKey, 'ssh key', o.url) : undefined;
      if (!privateKey && !process.env.SSH_AUTH_SOCK) throw invalid(`${o.url}: no sshKey and no ssh agent (SSH_AUTH_SOCK)`, 'give sshKey: the private key file that logs in to the host');
      const port = u.port ? Number(u.port) : 22;
      const knownHosts = o.sshKnownHosts ?? join(homedir(), '.ssh', 'known_hosts');
      let listed: string;
      try {
        listed = readFileSync(knownHosts, 'utf8');
      } catch (err) {
        throw invalid(`${o.url}: cannot read the known_hosts file ${knownHosts} (${(err as Error).message}): the host's key must be known before ClawGym logs in`, `add it after checking its fingerprint: ssh-keyscan -p ${port} ${u.hostname} >> ${knownHosts}; or set sshKnownHosts to a file that lists it`);
      }
      const hostKeys = new Set(knownHostKeys(listed, u.hostname, port));
      if (hostKeys.size === 0) throw invalid(`${o.url}: ${knownHostsName(u.hostname, port)} is not in ${knownHosts}: the host's key must be known before ClawGym logs in`, `add it after checking its fingerprint: ssh-keyscan -p ${port} ${u.hostname} >> ${knownHosts}; or set sshKnownHosts to a file that lists it`);
      // ssh2 gives the key blob the host presented; known_hosts holds the same blob in base64.
      const hostVerifier = (key: Buffer) => hostKeys.has(key.toString('base64'));
      // Requests go over dial-stdio channels of kept ssh connections (see SshDialAgent).
      const agent = new SshDialAgent({
        host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port, username: u.username ? decodeURIComponent(u.username) : undefined,
        ...(privateKey ? { privateKey } : { agent: process.env.SSH_AUTH_SOCK }), hostVerifier,
        ...(o.sshDockerSocket ? { dockerSocket: o.sshDockerSocket } : {}),
      });
      return {
        docker: new Docker({ protocol: 'http', host: u.hostname, port, agent } as Docker.DockerOptions),
        local: o.local ?? false,
        agent,
      };
    }
    default:
      throw invalid(`${o.url}: the scheme must be unix://, tcp:// or ssh://`);
  }
}

/**
 * A TLS or ssh handshake that failed, as a config error that says which side refused and what
 * to check (the library's own text is kept as the reason); undefined for any other error.
 */
export function handshakeRefusal(err: unknown, url: string): ClawGymError | undefined {
  const e = err as { code?: string; message?: string } | undefined;
  if (!e || typeof e !== 'object' || err instanceof ClawGymError) return undefined;
  const text = `${e.code ?? ''} ${e.message ?? ''}`;
  if (/alert (bad certificate|certificate required|unknown ca|certificate unknown|handshake failure)/i.test(text)) {
    return new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, `Docker host ${url} refused our TLS client certificate (${(e.message ?? text).trim().slice(0, 300)})`, {
      hint: 'tls.cert and tls.key must be a client certificate (extendedKeyUsage clientAuth) signed by the CA the engine trusts (its --tlscacert)', cause: err,
    });
  }
  if (/All configured authentication methods failed/.test(text)) {
    return new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, `Docker host ${url} refused our ssh key (${e.message})`, {
      hint: "the public half of sshKey (or of a key in the ssh agent) must be in the user's ~/.ssh/authorized_keys on that host", cause: err,
    });
  }
  if (/docker system dial-stdio on the host exited|ssh forwarding to .* on the host failed/.test(text)) {
    return new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, `Docker host ${url}: logged in, but no Docker engine answers there (${(e.message ?? '').slice(0, 400)})`, {
      hint: /dial-stdio/.test(text)
        ? 'ssh sessions on that host need the docker CLI on PATH and a running engine at its DOCKER_HOST (or give sshDockerSocket: the engine\'s socket path there)'
        : "check sshDockerSocket is the engine's socket on that host and sshd allows AllowStreamLocalForwarding (or leave sshDockerSocket out to use docker system dial-stdio)",
      cause: err,
    });
  }
  if (/Host denied \(verification failed\)/.test(text)) {
    return new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, `Docker host ${url} presented a host key that its known_hosts entry does not list (${e.message}): it may not be the machine you mean`, {
      hint: 'if the host was reinstalled, check its new fingerprint and replace its line in known_hosts (ssh-keygen -R <host>, then ssh-keyscan)', cause: err,
    });
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL|wrong version number/.test(e.code ?? '') || /wrong version number/i.test(text)) {
    return new ClawGymError(ErrorCodes.DOCKER_HOST_INVALID, `Docker host ${url}: its TLS certificate could not be verified (${(e.code ?? e.message ?? '').trim()}${e.message && e.code ? `: ${e.message.slice(0, 200)}` : ''})`, {
      hint: "tls.ca must be the CA that signed the engine's certificate, and the address in the url must be in that certificate's subjectAltName; a port that serves plain HTTP needs no tls", cause: err,
    });
  }
  return undefined;
}

/** Errors that mean the engine did not answer at all (as opposed to an HTTP error it sent). */
export function isUnreachable(err: unknown): boolean {
  if (err instanceof ClawGymError) return err.code === ErrorCodes.DOCKER_HOST_UNREACHABLE;
  const e = err as { statusCode?: number; code?: string; message?: string } | undefined;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.statusCode === 'number') return false;
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EAI_AGAIN', 'ABORT_ERR'].includes(e.code ?? '')
    || /socket hang up|timed out|Timeout|ECONNREFUSED|not answering/i.test(e.message ?? '');
}

/** `p`, or a DOCKER_HOST_UNREACHABLE error once `ms` pass without an answer. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ClawGymError(ErrorCodes.DOCKER_HOST_UNREACHABLE, `${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** One engine: its client, capacity, sandboxes in use and health. */
export class DockerHost {
  readonly docker: Docker;
  /** Whether folders and the proxy socket can be bind-mounted (see {@link DockerHostOption.local}). */
  readonly local: boolean;
  /** Sandboxes handed out and not yet destroyed. */
  inUse = 0;
  /** Sandboxes handed out over the provider's life. */
  handedOut = 0;
  /** Why it is down, while it is. */
  downReason?: string;
  private capacity?: number;
  private down = new AbortController();
  private readonly agent?: SshDialAgent;

  constructor(readonly url: string, private readonly o: DockerHostOption, docker?: Docker) {
    const made = docker ? { docker, local: o.local ?? true } : dockerClient(o);
    this.docker = made.docker;
    this.local = made.local;
    this.agent = made.agent;
  }

  /** End what the client keeps open (an ssh host's connections; they also end when idle). */
  close(): void {
    this.agent?.destroy();
  }

  get healthy(): boolean { return this.downReason === undefined; }

  /** Aborted when the host is marked down: sandboxes on it stop waiting for it. */
  get downSignal(): AbortSignal { return this.down.signal; }

  /** Most sandboxes at once: the option, else the engine's NCPU (asked once). */
  async maxSandboxes(timeoutMs: number): Promise<number> {
    if (this.o.maxSandboxes) return this.o.maxSandboxes;
    this.capacity ??= Math.max(1, (await withTimeout(this.docker.info() as Promise<{ NCPU?: number }>, timeoutMs, `${this.url} /info`)).NCPU ?? 1);
    return this.capacity;
  }

  markDown(reason: string): void {
    if (!this.healthy) return;
    this.downReason = reason;
    this.down.abort(new ClawGymError(ErrorCodes.DOCKER_HOST_UNREACHABLE, `Docker host ${this.url} stopped answering: ${reason}`));
  }

  markUp(): void {
    if (this.healthy) return;
    this.downReason = undefined;
    this.down = new AbortController();
  }

  /** Does it answer `/_ping` in time? */
  async ping(timeoutMs: number): Promise<boolean> {
    return withTimeout(this.docker.ping(), timeoutMs, `${this.url} /_ping`).then(() => true, () => false);
  }
}

/** The hosts of one provider, with a probe that keeps their health current. */
export class DockerHosts {
  readonly list: DockerHost[];
  private timer?: NodeJS.Timeout;
  private probing?: Promise<void>;
  /** The probe queued after the running one (see {@link probe}). */
  private next?: Promise<void>;

  constructor(hosts: DockerHost[], private readonly o: DockerHostsOptions = {}) {
    if (hosts.length === 0) throw invalid('hosts is empty: give at least one Docker host');
    const seen = new Set<string>();
    for (const h of hosts) {
      if (seen.has(h.url)) throw invalid(`${h.url} is listed twice in hosts`);
      seen.add(h.url);
    }
    this.list = hosts;
  }

  static parse(specs: readonly DockerHostSpec[], o: DockerHostsOptions = {}): DockerHosts {
    if (!Array.isArray(specs)) throw invalid('hosts must be a list');
    return new DockerHosts(specs.map((s) => {
      const opt = typeof s === 'string' ? { url: s } : s;
      if (!opt || typeof opt.url !== 'string') throw invalid(`each host is a URL or { url, ... }, got ${JSON.stringify(s)}`);
      return new DockerHost(opt.url, opt);
    }), o);
  }

  private get timeoutMs(): number { return this.o.probeTimeoutMs ?? 3000; }

  /**
   * The host for the next sandbox: among those that answer (and not in `exclude`), the one with
   * the most free capacity (`maxSandboxes` − in use; the first listed on a tie). Over capacity
   * everywhere, still the least loaded: the runner's concurrency is the bound. The sandbox is
   * counted on the host at once (`inUse`): the caller gives it back when it is gone or failed.
   */
  async pick(exclude: ReadonlySet<DockerHost> = new Set()): Promise<DockerHost> {
    this.startProbe();
    const candidates = this.list.filter((h) => h.healthy && !exclude.has(h));
    const capacities = await Promise.all(candidates.map(async (host) => {
      try {
        return await host.maxSandboxes(this.timeoutMs);
      } catch (err) {
        if (!isUnreachable(err)) throw handshakeRefusal(err, host.url) ?? err;
        host.markDown((err as Error).message);
        return 0;
      }
    }));
    // From here on nothing awaits: choosing and reserving happen together, so concurrent
    // callers see each other's reservations.
    let best: { host: DockerHost; free: number } | undefined;
    candidates.forEach((host, i) => {
      const max = capacities[i]!;
      if (!host.healthy || max === 0) return;
      const free = (max - host.inUse) / max;
      if (!best || free > best.free) best = { host, free };
    });
    if (!best) {
      const why = this.list.map((h) => `${h.url}: ${exclude.has(h) ? 'failed just now' : h.downReason ?? 'up'}`).join('; ');
      throw new ClawGymError(ErrorCodes.DOCKER_HOST_UNREACHABLE, `no Docker host is answering (${why})`, { hint: 'the hosts are probed every few seconds; sandboxes go to a host again once it answers /_ping' });
    }
    const chosen = (best as { host: DockerHost }).host;
    chosen.inUse++;
    return chosen;
  }

  /**
   * Probe every host now: one that answers is up, one that does not is down. A probe already
   * running may hold answers from before the call (a host that answered it and stopped since), so
   * then one more runs after it, shared by every call made meanwhile.
   */
  probe(): Promise<void> {
    if (!this.probing) {
      this.probing = Promise.all(this.list.map(async (h) => {
        if (await h.ping(this.timeoutMs)) h.markUp();
        else h.markDown(`/_ping had no answer in ${this.timeoutMs} ms`);
      })).then(() => undefined).finally(() => { this.probing = undefined; });
      return this.probing;
    }
    this.next ??= this.probing.catch(() => undefined).then(() => { this.next = undefined; return this.probe(); });
    return this.next;
  }

  private startProbe(): void {
    if (this.timer) return;
    const every = this.o.probeMs ?? 2000;
    // Without a periodic probe, a host that is down is still probed, so it can come back.
    this.timer = setInterval(() => {
      // A periodic probe while one runs would only queue another: skipped.
      if (!this.probing && (every > 0 || this.list.some((h) => !h.healthy))) void this.probe();
    }, every > 0 ? every : 2000);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const h of this.list) h.close();
  }
}
