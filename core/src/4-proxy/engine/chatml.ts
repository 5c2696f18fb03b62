import { randomHex } from '../../util/random-hex';
import type { ChatTemplate, FinishReason, OutputEvent, OutputStreamParser, TokenIds, Tokenizer } from '../../contracts/engine';
import type { CanonicalConversation, CanonicalMessage, MessagePart, ToolSpec } from '../../contracts/messages';
import { eventsToMessage } from './output';
import { appendAll } from '../../util/append';
import { IdChunks } from '../../util/id-chunks';
import { jsonNestingDepth } from '../../util/json-depth';

/** Deepest tool call the parser accepts (the proxy refuses requests nesting deeper than 128). */
const MAX_CALL_DEPTH = 128;

/** Ids of the special tokens ChatML needs, in the engine's vocabulary. */
export interface ChatMlSpecials {
  imStart: number;
  imEnd: number;
  toolCall: number;
  toolCallEnd: number;
  think: number;
  thinkEnd: number;
}

const TOOLS_HEADER =
  '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const TOOLS_FOOTER =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within ' +
  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** A fresh tool-call id (the wire formats only need uniqueness within a conversation). */
export const newToolCallId = () => `call_${randomHex(8)}`;

/**
 * ChatML with Qwen3/Hermes-style tool calls: tools rendered into the system turn, calls as
 * `<tool_call>{"name", "arguments"}</tool_call>`, results as `<tool_response>` in a user turn.
 * Every message renders on its own, so a full render equals the reuse path's
 * prompt + output + continuation whenever the output is well-formed.
 */
export class ChatMlTemplate implements ChatTemplate {
  readonly name = 'chatml-hermes';
  readonly stopIds: readonly number[];

  constructor(private readonly tokenizer: Tokenizer, private readonly sp: ChatMlSpecials) {
    this.stopIds = [sp.imEnd];
  }

  render(conversation: CanonicalConversation): TokenIds {
    const ids = new IdChunks();
    const messages = [...conversation.messages];
    // Tools live in the system turn; a conversation without a leading system message gets one.
    if (conversation.tools.length > 0 && messages[0]?.role !== 'system') messages.unshift({ role: 'system', parts: [] });
    messages.forEach((m, i) => this.renderMessage(m, ids, i === 0 ? conversation.tools : []));
    ids.push(this.sp.imStart);
    ids.add(this.tokenizer.encode('assistant\n'));
    return ids.toIds();
  }

  renderContinuation(next: CanonicalMessage[], finishReason: FinishReason): TokenIds {
    // A stop on <|im_end|> leaves it in the output; any other ending needs it inserted.
    const ids = new IdChunks();
    if (finishReason !== 'stop' && finishReason !== 'tool_calls') ids.push(this.sp.imEnd);
    ids.add(this.tokenizer.encode('\n'));
    for (const m of next) this.renderMessage(m, ids, []);
    ids.push(this.sp.imStart);
    ids.add(this.tokenizer.encode('assistant\n'));
    return ids.toIds();
  }

  private renderMessage(m: CanonicalMessage, ids: IdChunks, tools: readonly ToolSpec[]): void {
    const enc = (t: string) => ids.addText(t, this.tokenizer);
    const role = m.role === 'tool' ? 'user' : m.role;
    ids.push(this.sp.imStart);
    enc(`${role}\n`);
    if (m.role === 'assistant') this.renderAssistantBody(m.parts, ids);
    else {
      let first = true;
      for (const part of m.parts) {
        if (!first) enc('\n');
        first = false;
        if (part.type === 'tool_result') ids.addJoined(['<tool_response>\n', part.content, '\n</tool_response>'], this.tokenizer);
        else if (part.type === 'text' || part.type === 'thinking') enc(part.text);
        else enc(toolCallJson(part.name, part.arguments));
      }
    }
    if (tools.length > 0) {
      enc(TOOLS_HEADER);
      for (const t of tools) enc(`\n${JSON.stringify({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.parameters } })}`);
      enc(TOOLS_FOOTER);
    }
    ids.push(this.sp.imEnd);
    enc('\n');
  }

  /** Ids a model would generate for this assistant reply: its body, then `<|im_end|>`. */
  renderReply(parts: readonly MessagePart[]): number[] {
    const ids = new IdChunks();
    this.renderAssistantBody(parts, ids);
    ids.push(this.sp.imEnd);
    return Array.from(ids.toIds());
  }

  private renderAssistantBody(parts: readonly MessagePart[], ids: IdChunks): void {
    const enc = (t: string) => ids.addText(t, this.tokenizer);
    for (const part of parts) {
      if (part.type === 'thinking') { ids.push(this.sp.think); enc(`\n${part.text}\n`); ids.push(this.sp.thinkEnd); enc('\n\n'); }
    }
    for (const part of parts) if (part.type === 'text') enc(part.text);
    for (const part of parts) {
      if (part.type !== 'tool_call') continue;
      ids.push(this.sp.toolCall);
      enc(`\n${toolCallJson(part.name, part.arguments)}\n`);
      ids.push(this.sp.toolCallEnd);
    }
  }

  parse(outputIds: readonly number[]): CanonicalMessage {
    const parser = this.streamParser();
    return eventsToMessage([...outputIds.flatMap((id) => parser.push(id)), ...parser.end()]);
  }

  streamParser(): OutputStreamParser {
    const sp = this.sp;
    const tokenizer = this.tokenizer;
    type Mode = 'text' | 'thinking' | 'call';
    let mode: Mode = 'text';
    let callIds: number[] = [];
    const utf8 = new TextDecoder('utf-8');
    const text = (type: 'text' | 'thinking', id: number): OutputEvent[] => {
      const s = id < 256 ? utf8.decode(Uint8Array.of(id), { stream: true }) : tokenizer.decode([id]);
      return s ? [{ type, text: s }] : [];
    };
    const flushCall = (closed: boolean): OutputEvent[] => {
      const raw = tokenizer.decode(callIds);
      callIds = [];
      const call = closed ? parseToolCall(raw) : undefined;
      if (call) return [{ type: 'tool_call', call: { type: 'tool_call', id: newToolCallId(), ...call } }];
      // Not a valid call: it goes back to the harness as the text the model wrote.
      return [{ type: 'text', text: `<tool_call>${raw}${closed ? '</tool_call>' : ''}` }];
    };
    return {
      push(id) {
        if (id === sp.imEnd) return [];
        if (mode === 'call') {
          if (id === sp.toolCallEnd) { mode = 'text'; return flushCall(true); }
          callIds.push(id);
          return [];
        }
        if (id === sp.toolCall) { mode = 'call'; return []; }
        if (id === sp.think && mode === 'text') { mode = 'thinking'; return []; }
        if (id === sp.thinkEnd && mode === 'thinking') { mode = 'text'; return []; }
        return text(mode, id);
      },
      end() {
        const tail = utf8.decode();
        const out: OutputEvent[] = tail ? [{ type: mode === 'thinking' ? 'thinking' : 'text', text: tail }] : [];
        if (mode === 'call') appendAll(out, flushCall(false));
        return out;
      },
    };
  }
}

/** Canonical JSON of one tool call as the template writes it. */
function toolCallJson(name: string, args: string): string {
  let parsed: unknown;
  try { parsed = JSON.parse(args); } catch { parsed = args; }
  return JSON.stringify({ name, arguments: parsed });
}

/** `{"name": ..., "arguments": {...}}` → name and JSON arguments, or undefined if malformed. */
export function parseToolCall(raw: string): { name: string; arguments: string } | undefined {
  // A model can write JSON nested deeper than JSON.stringify can recurse: that is a malformed
  // call (it goes back as text), not an engine failure.
  if (jsonNestingDepth(raw) > MAX_CALL_DEPTH) return undefined;
  let value: unknown;
  try { value = JSON.parse(raw.trim()); } catch { return undefined; }
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name.length === 0) return undefined;
  let obj = args ?? {};
  if (typeof obj === 'string') { try { obj = JSON.parse(obj); } catch { return undefined; } }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  return { name, arguments: JSON.stringify(obj) };
}
