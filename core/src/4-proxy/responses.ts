import type { IncomingMessage, ServerResponse } from 'node:http';
import { messageOf } from '../errors';
import { STATUS } from './routes';
import { WireError, type WireAdapter } from './wire/types';

/** A JSON response, its length declared. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** An error in the shape the client's API gives errors; a response already under way is ended. */
export function sendError(res: ServerResponse, adapter: WireAdapter, err: unknown): void {
  const e = err instanceof WireError ? err : new WireError(500, 'engine', messageOf(err));
  if (res.headersSent) { if (!res.writableEnded) res.end(); return; }
  // A client too slow to send its request gets the answer and loses the connection.
  if (e.status === 408) res.shouldKeepAlive = false;
  const req = res.req as IncomingMessage | undefined;
  if (e.status === 413 && req && !req.complete && !req.destroyed) {
    // The whole answer goes out now, but the response ends only once the refused body is
    // drained (see discardRest): ended earlier, Node closes the connection under a client still
    // sending, which then sees EPIPE instead of the 413 it has already been sent.
    const text = JSON.stringify(adapter.errorBody(e.kind, e.message));
    res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.write(text);
    const end = () => { if (!res.writableEnded) res.end(); };
    req.once('end', end);
    req.once('close', end);
    return;
  }
  sendJson(res, e.status || STATUS[e.kind], adapter.errorBody(e.kind, e.message));
}

/** `/v1/models`: the one model, in Anthropic's shape or OpenAI's. */
export function modelsList(req: IncomingMessage, id: string): unknown {
  if (req.headers['anthropic-version']) {
    return { data: [{ type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: id, last_id: id };
  }
  return { object: 'list', data: [{ id, object: 'model', created: 0, owned_by: 'clawgym' }] };
}
