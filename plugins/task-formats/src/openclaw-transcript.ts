/**
 * An OpenClaw session transcript (the JSONL OpenClaw writes under
 * `~/.openclaw/agents/<agent>/sessions/`) built from what the proxy saw of a rollout: the main
 * agent's last request and the reply we returned. Graders written against OpenClaw's own file
 * (PinchBench's `grade(transcript, workspace)`, ClawGym-Task's reward payload) then grade a
 * rollout of any harness.
 *
 * Where it differs from OpenClaw's own file: one `session` header and `message` entries only (no
 * `model_change`, `thinking_level_change` or `custom` entries); no usage, cost, provider or
 * stop reason on messages; ids are sequential and every timestamp is the moment it was built;
 * system prompts are left out (OpenClaw does not write them either); a harness that rewrote
 * its history (compaction) shows the rewritten history, not what was said before it.
 */
import type { CanonicalMessage } from '@clawgym/core';

/** One line of the transcript, parsed. */
export type TranscriptEntry = Record<string, unknown>;

const argumentsOf = (text: string): unknown => {
  try { return JSON.parse(text); } catch { return text; }
};

/** The entries of the synthesized transcript (see the file comment), in order. */
export function openclawTranscript(conversation: readonly CanonicalMessage[], options: { sessionId?: string; cwd?: string; now?: Date } = {}): TranscriptEntry[] {
  const now = options.now ?? new Date();
  const timestamp = now.toISOString();
  const entries: TranscriptEntry[] = [{ type: 'session', version: 3, id: options.sessionId ?? 'clawgym', timestamp, cwd: options.cwd ?? '' }];
  let parentId: string | null = null;
  const push = (message: Record<string, unknown>) => {
    const id = `m${entries.length}`;
    entries.push({ type: 'message', id, parentId, timestamp, message: { ...message, timestamp: now.getTime() } });
    parentId = id;
  };
  const toolNames = new Map<string, string>();
  for (const m of conversation) {
    if (m.role === 'system') continue;
    // Tool results come as `tool` messages, or first in a user message (Anthropic's wire format).
    for (const p of m.parts) {
      if (p.type !== 'tool_result') continue;
      push({ role: 'toolResult', toolCallId: p.callId, toolName: toolNames.get(p.callId) ?? '', content: [{ type: 'text', text: p.content }], isError: p.isError === true });
    }
    if (m.role === 'user') {
      const text = m.parts.flatMap((p) => (p.type === 'text' ? [{ type: 'text', text: p.text }] : []));
      if (text.length) push({ role: 'user', content: text });
    } else if (m.role === 'assistant') {
      const content = m.parts.flatMap((p): Record<string, unknown>[] => {
        if (p.type === 'text') return [{ type: 'text', text: p.text }];
        if (p.type === 'thinking') return [{ type: 'thinking', thinking: p.text }];
        if (p.type === 'tool_call') { toolNames.set(p.id, p.name); return [{ type: 'toolCall', id: p.id, name: p.name, arguments: argumentsOf(p.arguments) }]; }
        return [];
      });
      push({ role: 'assistant', content });
    }
  }
  return entries;
}
