import { z } from 'zod';
import type { CanonicalConversation, CanonicalMessage } from '../contracts/messages';
import type { CallRole } from '../contracts/records';
import { messageOf } from '../errors';
import type { SessionState } from './sessions';
import type { ParsedRequest } from './wire/types';

/**
 * A structured-output request (`output_config.format`, `text.format`, `response_format` with a
 * JSON schema) tells the model its schema, as the hosted APIs do: the schema is added as a
 * system message after the harness's own system part. The engine samples freely (no
 * constrained decoding here); {@link checkSchema} says whether the reply met the schema.
 */
export function withSchemaInstruction(conversation: CanonicalConversation, schema: Record<string, unknown>): CanonicalConversation {
  const text = `Respond with only a JSON value (no other text) that follows this JSON schema:\n${JSON.stringify(schema)}`;
  const at = conversation.messages.findIndex((m) => m.role !== 'system');
  const messages: CanonicalMessage[] = [...conversation.messages];
  messages.splice(at < 0 ? messages.length : at, 0, { role: 'system', parts: [{ type: 'text', text }] });
  return { ...conversation, messages };
}

/** Check a reply's text against the request's JSON schema; the note says the outcome. */
export function checkSchema(reply: CanonicalMessage, schema: Record<string, unknown>): string {
  const text = reply.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('').trim();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'response schema: the reply is not JSON (sampling is not constrained)';
  }
  try {
    const result = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(value);
    return result.success ? 'response schema: the reply follows it' : `response schema: the reply does not follow it (${result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')})`;
  } catch (err) {
    return `response schema: not checked (${messageOf(err)})`;
  }
}

/**
 * What the call is for: the harness's classifier when it has one; otherwise a call that asks
 * for a JSON-schema reply is a `title` side call (titles, names, yes/no checks: never the agent's
 * own turn), and the rest are left to the tree builder.
 */
export function classifyCall(session: Pick<SessionState, 'classify'>, parsed: ParsedRequest): CallRole | undefined {
  if (session.classify) return session.classify(parsed.conversation, parsed.model, parsed.responseSchema ? { responseSchema: parsed.responseSchema } : {});
  return parsed.responseSchema ? 'title' : undefined;
}
