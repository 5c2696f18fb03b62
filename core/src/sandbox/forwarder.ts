import { connect, createServer, type Server } from 'node:net';

/** Port of the in-sandbox forwarder; every sandbox has its own loopback, so one port serves all. */
export const SANDBOX_PROXY_PORT = 4141;

/**
 * A loopback TCP forwarder to a Unix socket: inside a sandbox whose only network is its own
 * `lo`, harnesses that need a TCP URL reach the proxy through it, and through nothing else.
 * `at` is a port on `host`, or the fd of a socket already listening there (the local sandbox's
 * holder opens it before Node starts).
 */
export function startForwarder(socketPath: string, at: number | { fd: number }, host = '127.0.0.1'): Promise<Server> {
  const server = createServer((client) => {
    const upstream = connect(socketPath);
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (typeof at === 'number') server.listen(at, host, () => resolve(server));
    else server.listen({ fd: at.fd }, () => resolve(server));
  });
}
