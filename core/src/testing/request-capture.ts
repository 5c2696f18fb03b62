import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';

/** Request headers worth keeping in a capture (never the key: `x-api-key`, `authorization`). */
const KEPT_HEADERS = ['anthropic-beta', 'anthropic-version', 'user-agent', 'content-type', 'x-stainless-retry-count', 'x-claude-code-session-id', 'openai-beta', 'originator'];

/** One captured request of a real harness, as written to `<dir>/<n>.json`. */
export interface CapturedRequest {
  method: string;
  /** The path after the session prefix (`/v1/messages?beta=true`). */
  path: string;
  headers: Record<string, string>;
  /** The JSON body (or the raw text when it is not JSON; absent when empty). */
  body?: unknown;
}

function kept(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of KEPT_HEADERS) if (typeof headers[h] === 'string') out[h] = headers[h];
  return out;
}

/**
 * A Unix-socket listener that writes every request a harness sends to `dir` (numbered in
 * arrival order, session prefix and key removed) and forwards it unchanged to the proxy at
 * `target`. This is how the bodies in `core/src/4-proxy/__fixtures__/harness-requests` are
 * recorded from the real CLIs (`CLAWGYM_E2E_CAPTURE=<dir>` with the e2e tests).
 */
export async function startRequestCapture(socketPath: string, target: string, dir: string): Promise<Server> {
  mkdirSync(dir, { recursive: true });
  const { hostname, port } = new URL(target);
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString('utf8');
      let body: unknown;
      try { body = text ? JSON.parse(text) : undefined; } catch { body = text; }
      const entry: CapturedRequest = { method: req.method ?? 'GET', path: (req.url ?? '/').replace(/^\/s\/[^/]+/, ''), headers: kept(req.headers), ...(body === undefined ? {} : { body }) };
      writeFileSync(join(dir, `${String(n++).padStart(3, '0')}.json`), `${JSON.stringify(entry, null, 2)}\n`);
      const fwd = request({ host: hostname, port, method: req.method, path: req.url, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      fwd.on('error', (err) => { if (!res.headersSent) res.writeHead(502); res.end(String(err)); });
      fwd.end(raw);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // Like the proxy's own socket: sandboxed harnesses may run as another user.
  chmodSync(socketPath, 0o666);
  return server;
}

/** The folder of requests recorded from the real CLIs (works from src/ and dist/). */
export const RECORDED_REQUESTS_DIR = join(__dirname, '..', '..', 'src', '4-proxy', '__fixtures__', 'harness-requests');

/**
 * A request recorded from a real CLI: `<name>.capture.json` in {@link RECORDED_REQUESTS_DIR}
 * (see its README.md for which CLI, version and run made each).
 */
export function recordedRequest(name: string): CapturedRequest {
  return JSON.parse(readFileSync(join(RECORDED_REQUESTS_DIR, `${name}.capture.json`), 'utf8')) as CapturedRequest;
}
