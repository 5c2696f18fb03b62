import { messageOf, type GeneratedToken } from '@clawgym/core';

/** What one SSE chunk carries: the tokens new in it, and whether generation ended. */
export interface Step { tokens: GeneratedToken[]; finished: boolean }

/** Thrown by the chunk parsers (a malformed or error chunk); becomes a ClawGymError naming flavor and URL. */
export class EngineChunkError extends Error {}

export type Json = Record<string, any>;

export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The message of an error, with its cause's; duck-typed, since fetch errors may come from another realm. */
export const errorText = (e: unknown): string => {
  const { message, cause } = (e ?? {}) as { message?: unknown; cause?: unknown };
  const own = typeof message === 'string' ? message : messageOf(e);
  return cause === undefined ? own : `${own} (${errorText(cause)})`;
};

export function token(id: unknown, logprob: unknown): GeneratedToken {
  if (!Number.isInteger(id) || !isNum(logprob)) throw new EngineChunkError(`bad token entry (id ${JSON.stringify(id)}, logprob ${JSON.stringify(logprob)})`);
  return { tokenId: id as number, logprob };
}

/** A server-reported error (`data: {"error": ...}`) or an aborted generation. */
export function serverError(chunk: Json): never {
  const e = chunk.error;
  throw new EngineChunkError(`server error: ${typeof e === 'string' ? e : e?.message ?? JSON.stringify(e)}`);
}

/** Data payloads of a server-sent-event stream; calls `onBytes` whenever bytes arrive. */
export async function* sseData(body: ReadableStream<Uint8Array>, onBytes: () => void): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let data: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (!done) onBytes();
    buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const lines = buffered.split(/\r?\n/);
    buffered = done ? '' : lines.pop()!;
    for (const line of lines) {
      if (line === '') { if (data.length) yield data.join('\n'); data = []; }
      else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
    if (done) { if (data.length) yield data.join('\n'); return; }
  }
}
