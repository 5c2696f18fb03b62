import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a transcript expects (method, URL, JSON body) and the answer it gets. */
export interface Exchange { method: string; url: string; body?: unknown; status?: number; reply: unknown }

/** Servers a test started; each is closed after its test. */
export const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((done) => { s.closeAllConnections(); s.close(() => done()); })));
});

/**
 * A server that accepts exactly `transcript`, in order: each request must match the next
 * exchange (method, URL, JSON body), which it then answers; anything else is a 599 and a
 * recorded deviation, so a client that skips, reorders or changes a call fails the test.
 */
export async function transcriptServer(transcript: Exchange[]) {
  const deviations: string[] = [];
  let at = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : undefined;
      const want = transcript[at];
      const got = { method: req.method, url: req.url, body };
      if (!want || want.method !== got.method || want.url !== got.url || JSON.stringify(want.body) !== JSON.stringify(got.body)) {
        deviations.push(`#${at}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want ?? 'nothing')}`);
        res.writeHead(599).end();
        return;
      }
      at++;
      const text = typeof want.reply === 'string' ? want.reply : JSON.stringify(want.reply);
      res.writeHead(want.status ?? 200, { 'content-type': typeof want.reply === 'string' ? 'text/plain' : 'application/json' }).end(text);
    });
  });
  servers.push(server);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, deviations, consumed: () => at };
}
