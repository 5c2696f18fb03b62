import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from '@clawgym/core';

/** A JSON request body. */
export type Json = Record<string, any>;

/** A refusal of the engine server's, with the HTTP status the real servers answer with. */
export class EngineRequestError extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

/** Marks the `{}` that stands for a request without a body (a FastAPI `Body()` parameter then fails as missing). */
const NO_BODY = Symbol('no body');

/** Whether the request came without a body ({@link readJson} answered `{}` for it). */
export const bodyAbsent = (body: Json): boolean => (body as { [NO_BODY]?: true })[NO_BODY] === true;

/** The request body as JSON (`{}` when empty); 413 past `limit` bytes, 400 when it is not JSON. */
export async function readJson(req: IncomingMessage, limit: number): Promise<Json> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw new EngineRequestError(413, `request body over ${limit} bytes`);
    chunks.push(c as Buffer);
  }
  const raw = Buffer.concat(chunks).toString('utf8');
  if (!raw) return Object.defineProperty({}, NO_BODY, { value: true });
  try { return JSON.parse(raw) as Json; } catch { throw new EngineRequestError(400, 'request body is not JSON'); }
}

export const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

/** Token ids of a prompt: a list of integers (vLLM also takes a batch of one). */
export function promptIds(v: unknown, field: string): Int32Array {
  const ids = Array.isArray(v) && v.length === 1 && Array.isArray(v[0]) ? v[0] : v;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => Number.isInteger(x) && x >= 0)) {
    throw new EngineRequestError(400, `${field} must be a non-empty list of token ids (this server takes token ids, not text)`);
  }
  return Int32Array.from(ids as number[]);
}

/** A prompt the engine would refuse: a 400, as vLLM answers (not a 5xx, which says the server is broken). */
export function checkLength(engine: Engine, ids: Int32Array): void {
  if (engine.contextLength !== undefined && ids.length >= engine.contextLength) {
    throw new EngineRequestError(400, `This model's maximum context length is ${engine.contextLength} tokens. However, you requested ${ids.length} tokens in the prompt.`);
  }
}

/** A number from a request, or the default. */
export const num = (v: unknown, dflt: number) => (typeof v === 'number' && Number.isFinite(v) ? v : dflt);
