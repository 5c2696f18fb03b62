import type { IncomingMessage } from 'node:http';
import { anthropicMessages } from './wire/anthropic';
import { geminiGenerateContent, geminiRoute } from './wire/gemini';
import { openAiChat } from './wire/openai-chat';
import { openAiResponses } from './wire/openai-responses';
import type { ErrorKind, WireAdapter } from './wire/types';


export const ROUTES: Record<string, WireAdapter> = {
  '/v1/messages': anthropicMessages,
  '/v1/chat/completions': openAiChat,
  '/v1/responses': openAiResponses,
};

/** Response ids' prefixes, as each API's own ids read. */
export const ID_PREFIX: Record<WireAdapter['format'], string> = { 'anthropic-messages': 'msg', 'openai-chat': 'chatcmpl', 'openai-responses': 'resp', 'gemini-generate-content': 'gen' };

export const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400, authentication: 401, not_found: 404, gone: 410, too_large: 413, engine: 500, overloaded: 529,
};

/** Pick the error shape a client expects before its route is known. */
export function adapterFor(path: string, req: IncomingMessage): WireAdapter {
  if (path.includes('/messages') || req.headers['anthropic-version']) return anthropicMessages;
  if (path.includes('/responses')) return openAiResponses;
  if (geminiRoute(path.replace(/^\/s\/[^/]+/, ''))) return geminiGenerateContent;
  return openAiChat;
}

export function presentedKey(req: IncomingMessage): string | undefined {
  const x = req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
  if (typeof x === 'string' && x) return x;
  // Gemini clients may pass the key in the query instead (`?key=`).
  if (req.url?.includes('key=')) { const k = new URL(req.url, 'http://proxy').searchParams.get('key'); if (k) return k; }
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined;
}

/**
 * A request target the URL parser would give back unchanged: letters, digits, `_`, `-` and `/`
 * only, not starting `//` (which it reads as a host).
 */
const PLAIN_PATH = /^\/(?!\/)[\w/-]*$/;

/** The path of a request target, as `new URL(target, base).pathname` gives it (parsed only when it is not plain). */
export function pathOf(target: string): string {
  return PLAIN_PATH.test(target) ? target : new URL(target, 'http://proxy').pathname;
}
