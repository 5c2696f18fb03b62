import type { CanonicalMessage, MessagePart, ToolSpec } from '../contracts/messages';
import { stableJson } from '../util/stable-json';

/** OpenClaw re-appends this internal-context user message at the end of every request. */
export const OPENCLAW_CONTEXT_MARKER = '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>';

/** Set aside a trailing OpenClaw internal-context message, which moves between calls. */
export function splitTrailingContext(messages: readonly CanonicalMessage[]): { messages: CanonicalMessage[]; context?: CanonicalMessage } {
  const last = messages[messages.length - 1];
  const isContext = last?.role === 'user' && last.parts.length > 0 &&
    last.parts.every((p) => p.type === 'text') && (last.parts[0] as { text: string }).text.trimStart().startsWith(OPENCLAW_CONTEXT_MARKER);
  return isContext ? { messages: messages.slice(0, -1), context: last } : { messages: [...messages] };
}

/** Tool-call ids compared with non-alphanumerics removed (OpenClaw turns `call_ab1` into `callab1`). */
export const normalizeCallId = (id: string) => id.replace(/[^a-zA-Z0-9]/g, '');

const argsKey = (args: string) => {
  try { return stableJson(JSON.parse(args)); } catch { return args; }
};

function partKey(p: MessagePart): string | undefined {
  switch (p.type) {
    case 'text': return p.text.length ? `t:${p.text}` : undefined;
    // Harnesses may or may not echo reasoning; it never decides whether history matches.
    case 'thinking': return undefined;
    case 'tool_call': return `c:${normalizeCallId(p.id)}:${p.name}:${argsKey(p.arguments)}`;
    case 'tool_result': return `r:${normalizeCallId(p.callId)}:${p.isError ? 1 : 0}:${p.content}`;
  }
}

/**
 * The comparison key of a message after the normalisations harnesses need: cache_control is
 * never carried into canonical form, a lone text block and a string are both one text part,
 * tool-call ids lose non-alphanumerics, tool arguments compare as sorted JSON, thinking and
 * empty text are ignored. Adjacent text parts are joined.
 */
export function messageKey(m: CanonicalMessage): string {
  const keys: string[] = [];
  for (const p of m.parts) {
    const k = partKey(p);
    if (k === undefined) continue;
    if (k.startsWith('t:') && keys.length && keys[keys.length - 1]!.startsWith('t:')) keys[keys.length - 1] += k.slice(2);
    else keys.push(k);
  }
  return `${m.role === 'tool' ? 'user' : m.role}|${keys.join('\u0001')}`;
}

/** The parts that decide equality: thinking and empty text dropped, adjacent text joined. */
function significant(parts: readonly MessagePart[]): MessagePart[] {
  const out: MessagePart[] = [];
  for (const p of parts) {
    if (p.type === 'thinking' || (p.type === 'text' && p.text.length === 0)) continue;
    const last = out[out.length - 1];
    if (p.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + p.text };
    else out.push(p);
  }
  return out;
}

const sameId = (a: string, b: string) => a === b || normalizeCallId(a) === normalizeCallId(b);
const sameArgs = (a: string, b: string) => a === b || argsKey(a) === argsKey(b);

function samePart(a: MessagePart, b: MessagePart): boolean {
  switch (a.type) {
    case 'text': return b.type === 'text' && a.text === b.text;
    case 'tool_call': return b.type === 'tool_call' && a.name === b.name && sameId(a.id, b.id) && sameArgs(a.arguments, b.arguments);
    case 'tool_result': return b.type === 'tool_result' && a.content === b.content && !a.isError === !b.isError && sameId(a.callId, b.callId);
    default: return false;
  }
}

/**
 * Whether two messages are the same after the normalisations harnesses need (see
 * {@link messageKey}); the same relation, computed by comparison so that the common case —
 * identical strings — costs a string compare and builds nothing.
 */
export function sameMessage(a: CanonicalMessage, b: CanonicalMessage): boolean {
  if (a === b) return true;
  if ((a.role === 'tool' ? 'user' : a.role) !== (b.role === 'tool' ? 'user' : b.role)) return false;
  const pa = significant(a.parts);
  const pb = significant(b.parts);
  return pa.length === pb.length && pa.every((p, i) => samePart(p, pb[i]!));
}

/** Sorted keys by plain JSON of the tool list: a harness sends the same list, in the same order, at every call. */
const toolKeys = new Map<string, string>();

/**
 * Key of the tool list: a changed tool list is a new conversation. Remembered by the list's plain
 * JSON (native, a fraction of the sorting walk's cost); least recently used first out.
 */
export function toolsKey(tools: readonly ToolSpec[]): string {
  const shaped = tools.map((t) => [t.name, t.description ?? '', t.parameters]);
  const plain = JSON.stringify(shaped);
  const hit = toolKeys.get(plain);
  if (hit !== undefined) { toolKeys.delete(plain); toolKeys.set(plain, hit); return hit; }
  const key = stableJson(shaped);
  toolKeys.set(plain, key);
  if (toolKeys.size > 64) toolKeys.delete(toolKeys.keys().next().value!);
  return key;
}
