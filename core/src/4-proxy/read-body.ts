import type { IncomingMessage } from 'node:http';
import { WireError } from './wire/types';

/** Defaults of the connection limits: a slow or stalled client is closed within seconds. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * Drop the rest of a refused body without keeping it: the answer went out first, and the
 * connection stays usable for a client that finishes sending; one that has not within
 * `timeoutMs` is closed.
 */
export function discardRest(req: IncomingMessage, timeoutMs: number): void {
  const timer = setTimeout(() => req.socket.destroy(), timeoutMs);
  timer.unref();
  req.removeAllListeners('data');
  req.on('data', () => undefined);
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/** A body timer firing this much late or more means the event loop was held (by the proxy's own work). */
const BUSY_MS = 50;

/**
 * The body, in one buffer of the declared length where there is one (no chunks plus their
 * concatenation: one copy of the body, not two). A declared length over the limit is refused
 * before a byte of the body is read; a body that turns out longer than declared or than the
 * limit is refused as it crosses it; one not complete within `timeoutMs` is a 408.
 */
export function readBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const header = req.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    if (declared !== undefined && declared > limit) {
      discardRest(req, timeoutMs);
      reject(new WireError(413, 'too_large', `request body of ${declared} bytes is over the limit of ${limit}`));
      return;
    }
    const whole = declared !== undefined && Number.isSafeInteger(declared) ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: WireError) => { settled = true; clearTimeout(timer); chunks.length = 0; discardRest(req, timeoutMs); reject(err); };
    // The time the proxy itself was busy is not the client's: while another request's long
    // tokenization held the event loop, nothing was read, and the timer fires late, before the
    // socket's waiting data is read. A timer that fired late gives that time back.
    let due = performance.now() + timeoutMs;
    const expire = () => {
      if (settled) return;
      const now = performance.now();
      const late = now - due;
      if (late > BUSY_MS) { due = now + late; timer = setTimeout(expire, late); timer.unref(); return; }
      fail(new WireError(408, 'invalid_request', `the request body did not arrive within ${timeoutMs} ms (${size} of ${declared ?? 'unknown'} bytes)`));
    };
    let timer = setTimeout(expire, timeoutMs);
    timer.unref();
    req.on('data', (c: Buffer) => {
      if (settled) return;
      const cap = whole ? whole.length : limit;
      if (size + c.length > cap) { fail(new WireError(413, 'too_large', `request body is over the limit of ${limit} bytes`)); return; }
      if (whole) c.copy(whole, size); else chunks.push(c);
      size += c.length;
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (whole) resolve(size === whole.length ? whole : whole.subarray(0, size));
      // A body that came in one chunk is that chunk (no copy of tens of kilobytes per call).
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.on('error', (err) => { if (!settled) { settled = true; clearTimeout(timer); reject(err); } });
  });
}

