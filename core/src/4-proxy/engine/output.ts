import type { OutputEvent } from '../../contracts/engine';
import type { CanonicalMessage, MessagePart } from '../../contracts/messages';

/** Assemble streamed output events into the assistant message we returned (same tool-call ids). */
export function eventsToMessage(events: readonly OutputEvent[]): CanonicalMessage {
  const parts: MessagePart[] = [];
  for (const e of events) {
    const last = parts[parts.length - 1];
    if (e.type === 'tool_call') parts.push(e.call);
    else if (last && last.type === e.type) last.text += e.text;
    else parts.push({ type: e.type, text: e.text });
  }
  return { role: 'assistant', parts };
}
