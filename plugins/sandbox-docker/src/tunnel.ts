/**
 * The model endpoint for a container on a Docker host that cannot see our proxy's Unix socket:
 * a loopback forwarder inside the container whose connections travel, multiplexed, over the
 * stdin/stdout of one long-lived `docker exec`, to this process, which connects each to the
 * proxy's socket. The container keeps `NetworkMode: none`: the proxy is still the only thing it
 * reaches, and only through the engine's API connection that we opened.
 *
 * Frames, both ways: stream id (u32 BE), type (u8), payload length (u32 BE), payload.
 * Types: 0 open (container → host: a client connected), 1 data, 2 close, 3 ready (the forwarder
 * listens).
 */
import { connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { ClawGymError, ErrorCodes } from '@clawgym/core';
import type Docker from 'dockerode';

const OPEN = 0;
const DATA = 1;
const CLOSE = 2;
const READY = 3;
const HEADER = 9;

/** Inside the container: `node -e TUNNEL_SCRIPT <port>` (plain JS: the image has node and nothing of ours). */
export const TUNNEL_SCRIPT = `
const net = require('net');
const socks = new Map();
let next = 1;
function send(id, type, data) {
  const h = Buffer.alloc(${HEADER});
  h.writeUInt32BE(id, 0); h.writeUInt8(type, 4); h.writeUInt32BE(data ? data.length : 0, 5);
  process.stdout.write(data ? Buffer.concat([h, data]) : h);
}
net.createServer((s) => {
  const id = next++;
  socks.set(id, s);
  send(id, ${OPEN});
  s.on('data', (d) => send(id, ${DATA}, d));
  const done = () => { if (socks.delete(id)) send(id, ${CLOSE}); };
  s.on('end', done); s.on('close', done); s.on('error', () => s.destroy());
}).listen(Number(process.argv[1]), '127.0.0.1', () => send(0, ${READY}));
let buf = Buffer.alloc(0);
process.stdin.on('data', (d) => {
  buf = buf.length ? Buffer.concat([buf, d]) : d;
  while (buf.length >= ${HEADER}) {
    const len = buf.readUInt32BE(5);
    if (buf.length < ${HEADER} + len) break;
    const id = buf.readUInt32BE(0), type = buf[4], payload = buf.subarray(${HEADER}, ${HEADER} + len);
    buf = buf.subarray(${HEADER} + len);
    const s = socks.get(id);
    if (!s) continue;
    if (type === ${DATA}) s.write(payload);
    else if (type === ${CLOSE}) { socks.delete(id); s.end(); }
  }
});
process.stdin.on('end', () => process.exit(0));
`;

function frame(id: number, type: number, data?: Buffer): Buffer {
  const h = Buffer.alloc(HEADER);
  h.writeUInt32BE(id, 0);
  h.writeUInt8(type, 4);
  h.writeUInt32BE(data ? data.length : 0, 5);
  return data ? Buffer.concat([h, data]) : h;
}

/** The host side of one container's tunnel. */
export class ModelTunnel {
  private readonly upstreams = new Map<number, Socket>();
  private closed = false;
  /** Connections carried so far (for tests and messages). */
  connections = 0;

  private constructor(private readonly stream: NodeJS.ReadWriteStream, private readonly proxySocket: string) {}

  /**
   * Start the forwarder in `container` on `port` and carry its connections to `proxySocket`.
   * Resolves once the forwarder listens.
   */
  static async open(docker: Docker, container: Docker.Container, o: { proxySocket: string; port: number; user: string; timeoutMs?: number }): Promise<ModelTunnel> {
    const exec = await container.exec({
      Cmd: ['node', '-e', TUNNEL_SCRIPT, String(o.port)], User: o.user,
      AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false,
    });
    const stream = await exec.start({ hijack: true, stdin: true });
    const tunnel = new ModelTunnel(stream, o.proxySocket);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d: Buffer) => { err += d.toString(); });
    docker.modem.demuxStream(stream, stdout, stderr);
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ClawGymError(ErrorCodes.DOCKER_HOST_UNREACHABLE, `the model tunnel in ${container.id.slice(0, 12)} did not start in ${o.timeoutMs ?? 15_000} ms${err ? `: ${err.trim()}` : ''}`)), o.timeoutMs ?? 15_000);
      tunnel.onReady = () => { clearTimeout(timer); resolve(); };
      const ended = () => { clearTimeout(timer); reject(new ClawGymError(ErrorCodes.DOCKER_HOST_UNREACHABLE, `the model tunnel in ${container.id.slice(0, 12)} ended before it listened${err ? `: ${err.trim()}` : ''}`)); };
      stream.once('end', ended);
      stream.once('error', ended);
    });
    let buf: Buffer = Buffer.alloc(0);
    stdout.on('data', (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      while (buf.length >= HEADER) {
        const len = buf.readUInt32BE(5);
        if (buf.length < HEADER + len) break;
        tunnel.onFrame(buf.readUInt32BE(0), buf[4]!, buf.subarray(HEADER, HEADER + len));
        buf = buf.subarray(HEADER + len);
      }
    });
    const gone = () => tunnel.close();
    stream.on('end', gone);
    stream.on('close', gone);
    stream.on('error', gone);
    try {
      await ready;
    } catch (e) {
      tunnel.close();
      throw e;
    }
    return tunnel;
  }

  private onReady: () => void = () => undefined;

  private onFrame(id: number, type: number, payload: Buffer): void {
    if (type === READY) return this.onReady();
    if (type === OPEN) {
      this.connections++;
      const up = connect(this.proxySocket);
      this.upstreams.set(id, up);
      up.on('data', (d: Buffer) => this.write(frame(id, DATA, d)));
      const done = () => { if (this.upstreams.delete(id)) this.write(frame(id, CLOSE)); };
      up.on('end', done);
      up.on('close', done);
      up.on('error', () => up.destroy());
      return;
    }
    const up = this.upstreams.get(id);
    if (!up) return;
    if (type === DATA) up.write(payload);
    else if (type === CLOSE) { this.upstreams.delete(id); up.end(); }
  }

  private write(b: Buffer): void {
    if (!this.closed) this.stream.write(b);
  }

  /** Stop carrying: every connection is closed, the forwarder inside exits. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const up of this.upstreams.values()) up.destroy();
    this.upstreams.clear();
    try { this.stream.end(); } catch { /* already gone */ }
    (this.stream as unknown as { destroy?: () => void }).destroy?.();
  }
}
