/**
 * The HTTP agent of an `ssh://` Docker host: each connection to the engine is a
 * `docker system dial-stdio` channel (what the Docker CLI runs over ssh), or a channel forwarded
 * to the engine's socket when its path is given, on an ssh connection
 * that stays open and carries up to `maxChannels` of them (OpenSSH's `MaxSessions` is 10),
 * each kept alive for the next request as an HTTP connection is.
 *
 * dockerode's own ssh support opens a new ssh connection, with its key exchange and login, for
 * every API request: a sandbox makes tens of requests, so that cost seconds per sandbox.
 */
import { Agent, type ClientRequestArgs } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';

/**
 * A dial-stdio channel as a stream whose end waits for the command's exit: one that could not
 * reach the engine (no docker CLI there, no engine at its DOCKER_HOST) exits with why on stderr
 * before sending anything, and the request then fails with that instead of a bare hang-up.
 */
function dialStream(ch: ClientChannel): Duplex {
  let stderr = '';
  let received = false;
  let ended = false;
  let exit: number | null | undefined;
  const out = new Duplex({
    write(chunk, _enc, cb) { ch.write(chunk, cb); },
    final(cb) { ch.end(); cb(); },
    read() { ch.resume(); },
    destroy(err, cb) { ch.close(); cb(err); },
  });
  let finished = false;
  const finish = () => {
    if (finished || !ended || exit === undefined) return;
    finished = true;
    if (exit && !received) out.destroy(new Error(`docker system dial-stdio on the host exited ${exit}: ${stderr.trim() || '(no output)'}`));
    else out.push(null);
  };
  ch.stderr.on('data', (d: Buffer) => { if (stderr.length < 2000) stderr += d.toString('utf8'); });
  ch.on('data', (d: Buffer) => { received = true; if (!out.push(d)) ch.pause(); });
  ch.once('end', () => { ended = true; finish(); });
  ch.once('exit', (code: number | null) => { exit = code ?? 0; finish(); });
  // A channel closed without an exit status (the connection went): end as it is.
  ch.once('close', () => { ended = true; if (exit === undefined) exit = 0; finish(); });
  ch.on('error', (err: Error) => out.destroy(err));
  return out;
}

interface Connection {
  client: Client;
  socket: Socket;
  ready: Promise<void>;
  /** Channels open on it (in use or kept free by the agent). */
  channels: number;
  /** Channels in use by a request (the agent unrefs the ones it keeps free). */
  busy: number;
  dead: boolean;
  idle?: NodeJS.Timeout;
}

/** An http.Agent for one ssh host; `destroy()` ends its ssh connections. */
export class SshDialAgent extends Agent {
  private connections: Connection[] = [];
  /** What it opened over its life: ssh connections (key exchange and login) and dial-stdio channels. */
  readonly opened = { connections: 0, channels: 0 };

  /**
   * `dockerSocket`: the engine's socket on the host (`/var/run/docker.sock`): each connection is
   * then a channel forwarded to it (OpenSSH's `direct-streamlocal`), with no process started on
   * the host; without it, `docker system dial-stdio`, which follows the host's own DOCKER_HOST
   * or context, as the Docker CLI does.
   */
  constructor(private readonly config: ConnectConfig & { host: string; port: number; dockerSocket?: string }, private readonly maxChannels = 8, private readonly idleMs = 10_000) {
    // Kept-alive channels: starting `docker system dial-stdio` costs ~0.2 s a request, the
    // ssh handshake much less; a hijacked exec stream takes its channel for good.
    super({ keepAlive: true, maxFreeSockets: 4 });
  }

  // Node's Agent takes the socket from this callback when nothing is returned.
  override createConnection(_options: ClientRequestArgs, callback: (err: Error | null, stream: Duplex) => void): Duplex | undefined {
    this.channel().then((s) => callback(null, s), (err: Error) => callback(err, undefined as never));
    return undefined;
  }

  /** A connection with no request in flight lets the process exit, and is ended after a while. */
  private settle(c: Connection): void {
    clearTimeout(c.idle);
    if (c.dead) return;
    if (c.busy > 0) { c.socket.ref(); return; }
    c.socket.unref();
    c.idle = setTimeout(() => this.end(c), this.idleMs);
    c.idle.unref();
  }

  private async channel(): Promise<Duplex> {
    const c = this.connections.find((x) => !x.dead && x.channels < this.maxChannels) ?? this.open();
    c.channels++;
    c.busy++;
    this.settle(c);
    let inUse = true;
    const setBusy = (busy: boolean) => {
      if (busy === inUse) return;
      inUse = busy;
      c.busy += busy ? 1 : -1;
      this.settle(c);
    };
    let stream: Duplex;
    try {
      await c.ready;
      stream = await new Promise<Duplex>((resolve, reject) => {
        this.opened.channels++;
        if (this.config.dockerSocket) {
          const socket = this.config.dockerSocket;
          c.client.openssh_forwardOutStreamLocal(socket, (err, ch) => (err
            ? reject(new Error(`ssh forwarding to ${socket} on the host failed (${err.message}): sshd refuses it (AllowStreamLocalForwarding) or nothing listens there`))
            : resolve(ch)));
          return;
        }
        c.client.exec('docker system dial-stdio', (err, ch) => (err ? reject(err) : resolve(dialStream(ch))));
      });
    } catch (err) {
      c.channels--;
      setBusy(false);
      throw err;
    }
    stream.once('close', () => { c.channels--; setBusy(false); });
    // What the HTTP agent calls on a socket, which a channel is not: it unrefs the ones it
    // keeps free and refs one it hands out again.
    const s = stream as Duplex & Record<'setKeepAlive' | 'setNoDelay' | 'setTimeout' | 'ref' | 'unref', (...a: unknown[]) => unknown>;
    s.setKeepAlive = () => s;
    s.setNoDelay = () => s;
    s.setTimeout = () => s;
    s.ref = () => { setBusy(true); return s; };
    s.unref = () => { setBusy(false); return s; };
    return stream;
  }

  private open(): Connection {
    const socket = connect(this.config.port, this.config.host);
    const client = new Client();
    let ready!: () => void;
    let failed!: (e: Error) => void;
    const c: Connection = { client, socket, channels: 0, busy: 0, dead: false, ready: new Promise<void>((ok, fail) => { ready = ok; failed = fail; }) };
    c.ready.catch(() => undefined);
    const drop = (err?: Error) => {
      this.forget(c);
      failed(err ?? new Error('ssh connection closed'));
    };
    client.once('ready', ready);
    client.on('error', drop);
    client.on('close', () => drop());
    socket.on('error', (err) => drop(err));
    client.connect({ ...this.config, sock: socket });
    this.opened.connections++;
    this.connections.push(c);
    return c;
  }

  /** No more channels on `c`: it is gone, or being ended. */
  private forget(c: Connection): void {
    c.dead = true;
    clearTimeout(c.idle);
    this.connections = this.connections.filter((x) => x !== c);
  }

  private end(c: Connection): void {
    this.forget(c);
    c.client.end();
    c.socket.destroy();
  }

  override destroy(): void {
    super.destroy();
    for (const c of [...this.connections]) this.end(c);
  }
}
