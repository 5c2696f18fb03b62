import { connect, createServer, type Server } from 'node:net';

/** Port of the in-sandbox forwarder; every sandbox has its own loopback, so one port serves all. */
export const SANDBOX_PROXY_PORT = 4141;

/**
 * A loopback TCP forwarder to a Unix socket: inside a sandbox whose only network is its own
 * `lo`, harnesses that need a TCP URL reach the proxy through it, and through nothing else.
 * A side's end of input is passed on as a half-close (the other direction keeps flowing).
 */
export function startForwarder(socketPath: string, port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ path: socketPath, allowHalfOpen: true });
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
